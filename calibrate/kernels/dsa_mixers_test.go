package kernels

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

var dsv32 = DSAWidths{MLA: dsv3, IndexHeads: 64, IndexDim: 128, IndexTopK: 2048}

// TestDSAModuleOffsetByHand: a DSA row's other operators on an ideal,
// bandwidth-bound GPU cost their bytes over the bandwidth: the MLA
// projections and absorbed matmuls of a generation row at T tokens plus
// the indexer's wq_b, wk_weights_proj, k_norm and query rotary/quant,
// bytes summed by hand at 4 tokens and 16 heads.
func TestDSAModuleOffsetByHand(t *testing.T) {
	g, p := mixerGPU(), mixerIdealProfile()
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	pr := mixerPrecisions{bf16: bf16, peak: 1e21}
	const T, H = 4.0, 16.0
	gemm := func(n, k float64) float64 { return 2 * (k*n + T*k + T*n) }
	bytes := gemm(1536+576, 7168) + gemm(H*192, 1536) + gemm(7168, H*128) // fused_qkv_a_proj, q_b_proj, o_proj
	bytes += 2*(H*128*512+T*H*640) + 2*(H*512*128+T*H*640)                // mla_q_absorb, mla_v_up
	bytes += 2*2*T*(512+1536) + 2*2*T*(H+1)*64                            // latent norms, rotary
	bytes += gemm(64*128, 1536) + gemm(128+64, 7168)                      // dsa_wq_b, dsa_wk_weights_proj
	bytes += 2*2*T*128 + 2*2*T*64*128                                     // dsa_k_norm, dsa_q_rope_quant
	want := bytes / 1e12
	r := DSAModuleRow{Phase: "generation", Heads: 16, Batch: 4, ISL: 1, KVLen: 100, Widths: dsv32}
	if got := dsaModuleOffset(r, 4, g, p, p.GEMM, pr); math.Abs(got-want) > 1e-9*want {
		t.Errorf("offset %.9g s, want %.9g s", got, want)
	}
}

// TestDSARowSamplesByHand: a context row of 2 sequences of 3000 tokens
// after a 128-token prefix, 16 heads on a Hopper GPU: the indexer scores
// every causal pair (3000 x 128 + 3000 x 3001 / 2 per sequence) and reads
// 3128 keys per sequence; the sparse kernel gathers min(2048, visible)
// keys per query at 64 padded heads and reads min(gathered, 3128) latents.
func TestDSARowSamplesByHand(t *testing.T) {
	g, p := mixerGPU(), mixerIdealProfile()
	g.PeakTFLOPS["fp8"] = 2e9
	bf16, _ := roofline.LookupPrecision("bf16")
	pr := dsaPrecisions{mixerPrecisions: mixerPrecisions{bf16: bf16, peak: 1e21}, idxPeak: 2e21}
	r := DSAModuleRow{Phase: "context", Heads: 16, Batch: 2, ISL: 3000, Prefix: 128, Widths: dsv32, LatencyMS: 1}
	a, x, ctx := dsaRowSamples(r, g, p, p.GEMM, pr, false)
	pairs := 2 * (3000*128 + 3000*3001/2.0)
	// Query i (1-based) sees 128 + i keys: 1920 queries below 2048, the
	// rest capped.
	gathered := 2 * (1920*(129+2048)/2.0 + 1080*2048)
	if ctx != 3000 || x.FLOPs != 2*64*128*pairs || x.PeakFLOPS != 2e21 || x.SeqHeads != 2 {
		t.Errorf("indexer sample %+v (ctx %d)", x, ctx)
	}
	if wantB := 2*3128*132 + 6000*64*132 + 8*pairs; math.Abs(x.Bytes-wantB) > 1e-9*wantB {
		t.Errorf("indexer bytes %.6g, want %.6g", x.Bytes, wantB)
	}
	if want := 2 * 64 * gathered * (576 + 512); math.Abs(a.FLOPs-want) > 1e-9*want || a.SeqHeads != 2 || a.Seconds != 1e-3 {
		t.Errorf("sparse kernel sample %+v, want FLOPs %.6g", a, want)
	}
	if wantB := 2*3128*1152 + 6000*64*(576+512)*2.0; math.Abs(a.Bytes-wantB) > 1e-9*wantB {
		t.Errorf("sparse kernel bytes %.6g, want %.6g", a.Bytes, wantB)
	}
}

// TestCalibrateDSARecoversKernels: decode-module rows timed by a known
// sparse-kernel efficiency and a known indexer efficiency (plus the
// module's other operators), at two index head counts and KV lengths on
// both sides of index_topk, are fitted back within 3% on every row and
// cross-validated within 5%; first principles is worse, so both families
// are kept together.
func TestCalibrateDSARecoversKernels(t *testing.T) {
	g, base := mixerGPU(), mixerIdealProfile()
	g.PeakTFLOPS["bf16"], g.PeakTFLOPS["fp8"] = 400, 800
	attn := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 2e9}, Memory: hardware.Curve{Max: 0.7, Half: 3e6, Exp: 1}, LaunchUS: 15}
	idx := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.3, Half: 1e9}, Memory: hardware.Curve{Max: 0.6}, LaunchUS: 10, PerSeqHeadUS: 0.5}
	bf16, _ := roofline.LookupPrecision("bf16")
	pr := dsaPrecisions{mixerPrecisions: mixerPrecisions{bf16: bf16, peak: 400e12}, idxPeak: 800e12}
	k := &Tables{}
	glm := DSAWidths{MLA: MLAWidths{Hidden: 6144, QLoRA: 2048, KVLoRA: 512, Nope: 192, Rope: 64, V: 256}, IndexHeads: 32, IndexDim: 128, IndexTopK: 2048}
	for _, w := range []DSAWidths{dsv32, glm} {
		for _, h := range []int{16, 32, 64, 128} {
			for _, b := range []int{1, 4, 16, 64} {
				for _, l := range []int{256, 1024, 4096, 16384, 65536} {
					r := DSAModuleRow{Phase: "generation", KernelSource: "K", MLADtype: "bfloat16", KVDtype: "bfloat16", GEMMType: "bfloat16",
						Heads: h, Batch: b, ISL: 1, KVLen: l, Widths: w, LatencyMS: 1}
					a, x, _ := dsaRowSamples(r, g, base, base.GEMMFor("bf16"), pr, false)
					r.LatencyMS = (a.Predict(attn) + x.Predict(idx)) * 1e3
					k.DSAGeneration = append(k.DSAGeneration, r)
				}
			}
		}
	}
	res, err := CalibrateMixers(k, MixerOptions{GPU: g, Base: base, Folds: 4, Seed: 1, Restarts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) != 2 || res.Fits[0].Family != hardware.MixerDSADecode || res.Fits[1].JointWith != hardware.MixerDSADecode {
		t.Fatalf("fits %+v, want dsa_decode and dsa_indexer_decode with it", res.Fits)
	}
	f := res.Fits[0]
	t.Logf("%d rows, first principles %.1f%%, fitted %.2f%% (p90 %.2f), CV %.2f%%", f.Rows, f.FirstPrinciples.MedianAPE, f.Fitted.MedianAPE, f.Fitted.P90APE, f.CVMedian)
	if f.Fitted.P90APE > 3 || f.CVMedian > 5 || !f.Kept || f.FirstPrinciples.MedianAPE < 10 {
		t.Errorf("fitted p90 %.2f%%, CV median %.2f%%, first principles %.1f%%, kept %v", f.Fitted.P90APE, f.CVMedian, f.FirstPrinciples.MedianAPE, f.Kept)
	}
	for _, kk := range []hardware.MixerKernel{hardware.MixerDSADecode, hardware.MixerDSAIndexerDecode} {
		if _, ok := res.Profile.Mixer(kk); !ok {
			t.Errorf("%s not in the profile", kk)
		}
	}
	if _, ok := res.Profile.Mixer(hardware.MixerDSAPrefill); ok {
		t.Error("dsa_prefill in the profile without context rows")
	}
}
