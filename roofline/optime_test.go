package roofline

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/hardware"
)

func TestBatchedOpSecondsHand(t *testing.T) {
	// 1e6 bytes at 1 TB/s and efficiency 1 = 1 us (compute: 1e3 FLOP at
	// 1e14 x 0.5 is 0.02 ns); + 3 us launch; + 64 (request, KV head) pairs
	// x 0.25 us.
	c := Cost{FLOPs: 1e3, ActBytes: 1e6}
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 1}, LaunchUS: 3, PerSeqHeadUS: 0.25}
	tests := []struct {
		seqs int
		want float64
	}{{0, 4e-6}, {1, 4.25e-6}, {64, 20e-6}}
	for _, tt := range tests {
		if got := BatchedOpSeconds(c, tt.seqs, e, 1e14, 1e12); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("BatchedOpSeconds(seqs=%d) = %g, want %g", tt.seqs, got, tt.want)
		}
	}
	if got, want := BatchedOpSeconds(c, 0, e, 1e14, 1e12), OpSeconds(c, e, 1e14, 1e12); got != want {
		t.Errorf("0 sequences: %g, want OpSeconds %g", got, want)
	}
}

// The step model prices attention with BatchedOpSeconds: the per-pair
// term adds exactly PerSeqHeadUS x requests x KV heads per GPU x layers
// (llama-3.1-8b: 8 KV heads at TP 1, 4 at TP 2), and it is device time, so
// the CUDA-graph launch factor does not scale it.
func TestStepAttentionPerSequence(t *testing.T) {
	const perSeq = 0.5 // us
	withSeq := func() *hardware.GPU {
		g := h100()
		p := hardware.DefaultProfile()
		p.AttentionDecode.PerSeqHeadUS = perSeq
		p.AttentionPrefill.PerSeqHeadUS = perSeq
		g.Profile = p
		return g
	}
	base := h100()
	base.Profile = hardware.DefaultProfile()
	tests := []struct {
		name string
		in   StepInput
		seqs int
	}{
		{"decode only (graph)", StepInput{Decodes: []int{100, 2000, 5, 700}}, 4},
		{"prefill only", StepInput{Prefills: []Chunk{{Tokens: 300}, {Tokens: 50, Cached: 100}}}, 2},
		{"mixed", StepInput{Prefills: []Chunk{{Tokens: 300}}, Decodes: []int{10, 20, 30}}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, tp := range []int{1, 2} {
				a := mustStep(t, llama8b(), base, StepOptions{TP: tp}).Cost(&tt.in)
				b := mustStep(t, llama8b(), withSeq(), StepOptions{TP: tp}).Cost(&tt.in)
				want := perSeq * 1e-6 * float64(tt.seqs*8/tp) * 32
				if got := b.Seconds - a.Seconds; math.Abs(got-want) > 1e-12 {
					t.Errorf("TP %d: per-pair time %g s, want %g s", tp, got, want)
				}
			}
		})
	}
}

// A tiled GEMM efficiency reads its compute curve at the output tile count:
// m=300, n=6144 in 128x128 tiles is ceil(300/128)*48 = 144 tiles; with
// Max 0.5, Half 144, Exp 1 the efficiency is 0.25, so the compute time is
// F/(P*0.25) with the unpadded F. The step model prices its qkv_proj with
// exactly the formula of OpSeconds.
func TestTiledGEMMHand(t *testing.T) {
	bf, err := LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	c := GEMM(300, 6144, 4096, bf, bf)
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 144, Exp: 1},
		Memory: hardware.Curve{Max: 1}, LaunchUS: 2, TileM: 128, TileN: 128}
	F := 2.0 * 300 * 6144 * 4096
	tc := F / (989.4e12 * 0.25)
	tm := (300*4096 + 300*6144 + 4096*6144) * 2.0 / 3350e9
	want := math.Max(tc, tm) + 2e-6
	if got := OpSeconds(c, e, 989.4e12, 3350e9); !near(got, want, 1e-14) {
		t.Errorf("OpSeconds = %.9g, want %.9g", got, want)
	}
	// The efficiency relative to the unpadded roofline never exceeds Max.
	if eff := F / (989.4e12 * (OpSeconds(c, e, 989.4e12, 3350e9) - 2e-6)); eff > e.Compute.Max+1e-12 {
		t.Errorf("efficiency %g above Max %g", eff, e.Compute.Max)
	}

	g := h100()
	p := hardware.DefaultProfile()
	p.GEMM = e
	g.Profile = p
	m := mustStep(t, llama8b(), g, StepOptions{})
	var qkv *OpTime
	ops := m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 300, Sampled: true}}})
	for i := range ops {
		if ops[i].Name == "qkv_proj" {
			qkv = &ops[i]
		}
	}
	if qkv == nil {
		t.Fatal("no qkv_proj op")
	}
	if !near(qkv.Seconds, 32*want, 1e-12) {
		t.Errorf("step qkv_proj %.9g s, want 32 x OpSeconds = %.9g s", qkv.Seconds, 32*want)
	}
}

// The depth, input and output terms by hand: the same 300 x 6144 x 4096
// GEMM with KHalf 1024 runs at 0.25 * 4096/5120 = 0.2 of peak; an input
// cost of 0.01 ns per element, plus a 0.02 ns spill that is half phased in
// at exactly its 300 * 4096 input elements, adds (0.01 + 0.01) ns * 300 *
// 4096, and an output cost of 0.002 ns per element adds
// 0.002 ns * 300 * 6144, both outside the max.
// The step model's qkv_proj (k = 4096, n = 6144 for llama-3.1-8b) uses the
// same formula.
func TestGEMMDepthInputOutputHand(t *testing.T) {
	bf, err := LookupPrecision("bf16")
	if err != nil {
		t.Fatal(err)
	}
	c := GEMM(300, 6144, 4096, bf, bf)
	if c.K != 4096 {
		t.Fatalf("GEMM K = %d, want 4096", c.K)
	}
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 144, Exp: 1},
		Memory: hardware.Curve{Max: 1}, LaunchUS: 2, TileM: 128, TileN: 128, KHalf: 1024, InputElementNS: 0.01,
		InputSpillNS: 0.02, InputSpillElements: 300 * 4096, OutputElementNS: 0.002}
	F := 2.0 * 300 * 6144 * 4096
	want := F/(989.4e12*0.2) + 0.02e-9*300*4096 + 0.002e-9*300*6144 + 2e-6
	if got := OpSeconds(c, e, 989.4e12, 3350e9); !near(got, want, 1e-14) {
		t.Errorf("OpSeconds = %.9g, want %.9g", got, want)
	}
	g := h100()
	p := hardware.DefaultProfile()
	p.GEMM = e
	g.Profile = p
	m := mustStep(t, llama8b(), g, StepOptions{})
	for _, op := range m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 300, Sampled: true}}}) {
		if op.Name == "qkv_proj" && !near(op.Seconds, 32*want, 1e-12) {
			t.Errorf("step qkv_proj %.9g s, want 32 x OpSeconds = %.9g s", op.Seconds, 32*want)
		}
	}
}

// With an fp8 KV cache and a profile entry for it, prefill attention is
// priced with AttentionPrefillByKV["fp8"] at the fp8 peak: the op reports
// fp8 as its compute precision and costs exactly BatchedOpSeconds at that
// peak, times the layers. Without the entry (or with a bf16 cache) it keeps
// AttentionPrefill at the activations' peak.
func TestPrefillAttentionByKV(t *testing.T) {
	e8 := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.25}, Memory: hardware.Curve{Max: 1}, LaunchUS: 5, PerSeqHeadUS: 0.1}
	g := h100()
	p := hardware.DefaultProfile()
	p.AttentionPrefillByKV = map[string]hardware.OpEfficiency{"fp8": e8}
	g.Profile = p
	in := &StepInput{Prefills: []Chunk{{Tokens: 2048, Sampled: true}}}
	find := func(m *StepModel) OpTime {
		for _, op := range m.Breakdown(in) {
			if op.Name == "attention_prefill" {
				return op
			}
		}
		t.Fatal("no attention_prefill op")
		return OpTime{}
	}
	m8 := mustStep(t, llama8b(), g, StepOptions{KVDType: "fp8"})
	op := find(m8)
	if op.ComputePrecision != "fp8" {
		t.Errorf("fp8 KV: compute precision %q, want fp8", op.ComputePrecision)
	}
	fp8, _ := LookupPrecision("fp8")
	bf, _ := LookupPrecision("bf16")
	c := AttentionPrefill(1, 32, 8, 128, 2048, 0, fp8, bf, 0)
	pk, _ := g.PeakFLOPS("fp8")
	per := OpSeconds(c, e8, pk, g.BandwidthBytesPerSec()) - e8.LaunchUS*1e-6 + e8.SeqHeadSeconds(8)
	launch := e8.LaunchUS * 1e-6 * p.GraphLaunchFactor
	if p.GraphMaxTokens < 2048 {
		launch = e8.LaunchUS * 1e-6
	}
	if want := 32 * (per + launch); !near(op.Seconds, want, 1e-9) {
		t.Errorf("fp8 KV prefill attention %.9g s, want %.9g s", op.Seconds, want)
	}
	if op := find(mustStep(t, llama8b(), g, StepOptions{KVDType: "bf16"})); op.ComputePrecision != "bf16" {
		t.Errorf("bf16 KV: compute precision %q, want bf16", op.ComputePrecision)
	}
	g2 := h100()
	g2.Profile = hardware.DefaultProfile()
	if op := find(mustStep(t, llama8b(), g2, StepOptions{KVDType: "fp8"})); op.ComputePrecision != "bf16" {
		t.Errorf("fp8 KV without an entry: compute precision %q, want bf16", op.ComputePrecision)
	}
}

// GEMMInputFusedFraction removes that share of every GEMM's input-side time
// from a step, by hand on qkv_proj (llama-3.1-8b, 300 tokens, k = 4096):
// with 0.75 fused the op costs OpSeconds minus 0.75 x the input term; the
// output (epilogue) term is not fused away. The isolated-kernel formula,
// OpSeconds, is unchanged.
func TestGEMMInputFusedFraction(t *testing.T) {
	e := hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5, Half: 144, Exp: 1},
		Memory: hardware.Curve{Max: 1}, LaunchUS: 2, TileM: 128, TileN: 128, InputElementNS: 0.01, OutputElementNS: 0.002}
	qkv := func(fused float64) float64 {
		g := h100()
		p := hardware.DefaultProfile()
		p.GEMM = e
		p.GEMMInputFusedFraction = fused
		g.Profile = p
		m := mustStep(t, llama8b(), g, StepOptions{})
		for _, op := range m.Breakdown(&StepInput{Prefills: []Chunk{{Tokens: 300, Sampled: true}}}) {
			if op.Name == "qkv_proj" {
				return op.Seconds
			}
		}
		t.Fatal("no qkv_proj")
		return 0
	}
	whole, fused := qkv(0), qkv(0.75)
	want := 32 * 0.75 * 0.01e-9 * 300 * 4096
	if got := whole - fused; !near(got, want, 1e-9) {
		t.Errorf("fused saves %.9g s, want 32 x 0.75 x 0.01 ns x 300 x 4096 = %.9g s", got, want)
	}
}

// L2Speedup describes the kernel benchmarks' warm L2, not serving: the step
// model prices every operator at the DRAM rate, so setting it on every
// operator family leaves a mixed step's cost unchanged to the last bit.
func TestStepIgnoresBenchmarkL2Speedup(t *testing.T) {
	in := &StepInput{Prefills: []Chunk{{Tokens: 512, Sampled: true}}, Decodes: []int{100, 2000, 30000}}
	g := h100()
	g.Profile = hardware.DefaultProfile()
	base := mustStep(t, llama8b(), g, StepOptions{}).Cost(in)
	p := hardware.DefaultProfile()
	for _, e := range []*hardware.OpEfficiency{&p.GEMM, &p.AttentionPrefill, &p.AttentionDecode, &p.Elementwise, &p.MoE} {
		e.L2Speedup = 3
	}
	g2 := h100()
	g2.Profile = p
	if got := mustStep(t, llama8b(), g2, StepOptions{}).Cost(in); got != base {
		t.Errorf("step cost with L2Speedup %+v, without %+v", got, base)
	}
}
