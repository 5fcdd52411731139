package kernels

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// mixerGPU is a test GPU with a compute peak so high that every operator
// of these tests is bound by its bytes, which makes times easy to compute
// by hand.
func mixerGPU() *hardware.GPU {
	return &hardware.GPU{Name: "mixer-test", PeakTFLOPS: map[string]float64{"bf16": 1e9, "fp32": 1e9},
		MemoryBandwidthGBps: 1000, MemoryGiB: 80}
}

func mixerIdealProfile() *hardware.Profile {
	one := hardware.OpEfficiency{Compute: hardware.Curve{Max: 1}, Memory: hardware.Curve{Max: 1}}
	p := hardware.DefaultProfile()
	p.GEMM, p.AttentionPrefill, p.AttentionDecode, p.Elementwise = one, one, one, one
	p.GEMMByPrecision = nil
	return p
}

var dsv3 = MLAWidths{Hidden: 7168, QLoRA: 1536, KVLoRA: 512, Nope: 128, Rope: 64, V: 128}

// TestMLAModuleOffsetByHand: a generation row's other operators on an
// ideal, bandwidth-bound GPU cost their bytes over the bandwidth; the bytes
// are summed by hand from the module's operators at 4 tokens and 16 heads.
func TestMLAModuleOffsetByHand(t *testing.T) {
	g, p := mixerGPU(), mixerIdealProfile()
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	pr := mixerPrecisions{bf16: bf16, peak: 1e21}
	r := MLAModuleRow{Phase: "generation", Heads: 16, Batch: 4, Step: 100, Widths: dsv3}
	const T, H = 4.0, 16.0
	bytes := 0.0
	gemm := func(n, k float64) float64 { return 2 * (k*n + T*k + T*n) }
	bytes += gemm(1536+576, 7168)      // fused_qkv_a_proj
	bytes += gemm(H*192, 1536)         // q_b_proj
	bytes += gemm(7168, H*128)         // o_proj
	bytes += 2 * (H*128*512 + T*H*640) // mla_q_absorb
	bytes += 2 * (H*512*128 + T*H*640) // mla_v_up
	bytes += 2 * 2 * T * (512 + 1536)  // kv_a and q_a layernorms
	bytes += 2 * 2 * T * (H + 1) * 64  // rotary
	want := bytes / 1e12
	got := mlaModuleOffset(r, g, p, p.GEMM, pr)
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("offset %.9g s, want %.9g s", got, want)
	}
	// Context rows up-project the prompt's latents (kv_b_proj) instead.
	rc := MLAModuleRow{Phase: "context", Heads: 16, Batch: 2, ISL: 2, Widths: dsv3}
	wantC := want - (2*(H*128*512+T*H*640)+2*(H*512*128+T*H*640))/1e12 + gemm(H*256, 512)/1e12
	if got := mlaModuleOffset(rc, g, p, p.GEMM, pr); math.Abs(got-wantC) > 1e-9*wantC {
		t.Errorf("context offset %.9g s, want %.9g s", got, wantC)
	}
}

// TestMLABackendOffsetByHand: a BackendOnly row (the attention backend's
// forward, kernel-level tables) has beside the kernel only what the
// backend runs: for generation the two absorbed per-head matmuls, for
// context kv_b_proj; bytes summed by hand as in TestMLAModuleOffsetByHand.
func TestMLABackendOffsetByHand(t *testing.T) {
	g, p := mixerGPU(), mixerIdealProfile()
	bf16, err := roofline.LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	pr := mixerPrecisions{bf16: bf16, peak: 1e21}
	const H = 16.0
	gemm := func(m, n, k float64) float64 { return 2 * (k*n + m*k + m*n) }
	r := MLAModuleRow{Phase: "generation", BackendOnly: true, Heads: 16, Batch: 4, Step: 100, Widths: dsv3}
	want := (2*(H*128*512+4*H*640) + 2*(H*512*128+4*H*640)) / 1e12 // mla_q_absorb, mla_v_up
	if got := mlaModuleOffset(r, g, p, p.GEMM, pr); math.Abs(got-want) > 1e-9*want {
		t.Errorf("generation offset %.9g s, want %.9g s", got, want)
	}
	rc := MLAModuleRow{Phase: "context", BackendOnly: true, Heads: 16, Batch: 2, ISL: 3, Widths: dsv3}
	wantC := gemm(6, H*256, 512) / 1e12 // kv_b_proj over the 6 prompt tokens
	if got := mlaModuleOffset(rc, g, p, p.GEMM, pr); math.Abs(got-wantC) > 1e-9*wantC {
		t.Errorf("context offset %.9g s, want %.9g s", got, wantC)
	}
}

// TestCalibrateMixersRecoversKernel: decode-module and GDN rows timed by a
// known kernel efficiency (plus the module's other operators) are fitted
// back within 2% on every row and cross-validated within 5%; first
// principles (the base profile, a different efficiency) is worse, so the
// fits are kept, and only fitted families enter the profile.
func TestCalibrateMixersRecoversKernel(t *testing.T) {
	g, base := mixerGPU(), mixerIdealProfile()
	g.PeakTFLOPS["bf16"] = 400 // the decode kernel turns compute-bound at many heads
	truth := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.7, Half: 2e9}, Memory: hardware.Curve{Max: 0.8, Half: 3e6, Exp: 1}, LaunchUS: 20}
	bf16, _ := roofline.LookupPrecision("bf16")
	pr := mixerPrecisions{bf16: bf16, peak: 400e12}
	k := &Tables{}
	d := roofline.MLADims{KVLoRA: 512, Nope: 128, Rope: 64, V: 128}
	for _, h := range []int{8, 16, 32, 64, 128} {
		for _, b := range []int{1, 4, 16, 64, 256} {
			for _, s := range []int{256, 1024, 4096, 16384} {
				r := MLAModuleRow{Phase: "generation", KernelSource: "K", MLADtype: "bfloat16", KVDtype: "bfloat16", GEMMType: "bfloat16",
					Heads: h, Batch: b, Step: s, Widths: dsv3}
				c := roofline.MLADecodeAttention(float64(b*s), b, h, d, bf16, bf16)
				bw := g.BandwidthBytesPerSec()
				t := roofline.BatchedOpSeconds(c, b, truth, pr.peak, bw) + mlaModuleOffset(r, g, base, base.GEMMFor("bf16"), pr)
				r.LatencyMS = t * 1e3
				k.MLAGeneration = append(k.MLAGeneration, r)
			}
		}
	}
	for _, vh := range []int{4, 8, 16, 32, 48} {
		for _, b := range []int{1, 8, 64, 512} {
			dd := roofline.GDNDims{KeyHeads: vh / 4, ValueHeads: vh, KeyDim: 128, ValueDim: 128, ConvKernel: 4}
			c := roofline.GDNDecode(dd, b, bf16, bf16)
			k.GDN = append(k.GDN, GDNRow{KernelSource: "fused_recurrent_gated_delta_rule_packed_decode", Phase: "generation", Batch: b, SeqLen: 1, Tokens: b,
				KeyHeads: vh / 4, KeyDim: 128, ValueHeads: vh, ValueDim: 128, ConvTaps: 4,
				LatencyMS: roofline.OpSeconds(c, truth, pr.peak, g.BandwidthBytesPerSec()) * 1e3})
		}
	}
	res, err := CalibrateMixers(k, MixerOptions{GPU: g, Base: base, Folds: 4, Seed: 1, Restarts: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fits) != 2 {
		t.Fatalf("got %d fits, want mla_decode and gdn_decode", len(res.Fits))
	}
	for _, f := range res.Fits {
		t.Logf("%s: %d rows, first principles %.1f%%, fitted %.2f%%, CV %.2f%%", f.Family, f.Rows, f.FirstPrinciples.MedianAPE, f.Fitted.MedianAPE, f.CVMedian)
		if f.Fitted.P90APE > 2 || f.CVMedian > 5 || !f.Kept || f.FirstPrinciples.MedianAPE < 10 {
			t.Errorf("%s: fitted p90 %.2f%%, CV median %.2f%%, first principles %.1f%%, kept %v", f.Family, f.Fitted.P90APE, f.CVMedian, f.FirstPrinciples.MedianAPE, f.Kept)
		}
		if _, ok := res.Profile.Mixer(f.Family); ok != f.Kept {
			t.Errorf("%s: in profile %v, kept %v", f.Family, ok, f.Kept)
		}
	}
	for _, kk := range []hardware.MixerKernel{hardware.MixerMLAPrefill, hardware.MixerMLABMM, hardware.MixerGDNPrefill} {
		if _, ok := res.Profile.Mixer(kk); ok {
			t.Errorf("%s in the profile without rows", kk)
		}
	}
	if _, err := CalibrateMixers(k, MixerOptions{GPU: g, Base: base, Folds: 1}); err == nil {
		t.Error("folds 1 accepted")
	}
}
