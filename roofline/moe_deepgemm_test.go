package roofline

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
)

// TestDeepGEMMRows: the contiguous buffer holds tokens x topK rows plus 127
// rows of padding per local expert, rounded up to 128 rows.
func TestDeepGEMMRows(t *testing.T) {
	for _, tt := range []struct{ tokens, topK, experts, want int }{
		{10, 8, 128, 16384}, // 80 + 16256 = 16336
		{1, 8, 128, 16384},  // 8 + 16256 = 16264
		{16, 8, 128, 16384}, // 128 + 16256 = 16384 exactly
		{18, 8, 128, 16512}, // 144 + 16256 = 16400
		{9, 8, 64, 8320},    // 72 + 8128 = 8200
		{15, 8, 32, 4224},   // 120 + 4064 = 4184
		{8000, 8, 128, 80256},
		{0, 8, 128, 0},
	} {
		if got := DeepGEMMRows(tt.tokens, tt.topK, tt.experts); got != tt.want {
			t.Errorf("DeepGEMMRows(%d, %d, %d) = %d, want %d", tt.tokens, tt.topK, tt.experts, got, tt.want)
		}
	}
}

// fp8BlockMoE is smallMoE with 128x128 block-scaled fp8 weights.
func fp8BlockMoE() *model.Config {
	c := smallMoE()
	c.DType = "fp8_block"
	return c
}

// TestDeepGEMMExpertsHandComputed: with ideal efficiencies, a decode step of
// 4 tokens on the DeepGEMM path costs, per MoE layer, the two grouped GEMMs
// over all 8192 buffer rows (compute or weight-and-buffer streaming,
// whichever is longer), the activation over the buffer and the row copies.
func TestDeepGEMMExpertsHandComputed(t *testing.T) {
	g := withProfile(h100(), idealProfile())
	m := mustStep(t, fp8BlockMoE(), g, StepOptions{MoEKernel: MoEKernelDeepGEMM})
	if m.MoEKernel() != MoEKernelDeepGEMM || m.Options().MoEKernel != MoEKernelDeepGEMM {
		t.Fatalf("kernel %q, options %q, want %q", m.MoEKernel(), m.Options().MoEKernel, MoEKernelDeepGEMM)
	}
	in := &StepInput{Decodes: []int{100, 100, 100, 100}}
	const (
		layers = 3 // smallMoE: 4 layers, the first dense
		R      = 8192.0
		H      = 2048.0
		I      = 768.0
		peak8  = 1978.9e12
		peak16 = 989.4e12
		bw     = 3350e9
	)
	touched := 64 * (1 - math.Pow(1-8.0/64, 4))
	w := (8 + 32.0/16384) / 8
	want := map[string]struct{ flops, bytes, seconds float64 }{}
	put := func(name string, flops, bytes, peak float64) {
		want[name] = struct{ flops, bytes, seconds float64 }{layers * flops, layers * bytes, layers * math.Max(flops/peak, bytes/bw)}
	}
	put("experts_gemm1", 2*R*2*I*H, touched*2*I*H*w+R*H+R*2*I*2, peak8)
	put("experts_act", 5*R*I, R*I*3*2, peak16)
	put("experts_gemm2", 2*R*H*I, touched*H*I*w+R*I+R*H*2, peak8)
	put("experts_permute", 0, 4*H+32*H+32*H*2+4*H*2, peak16)
	got := 0
	for _, o := range m.Breakdown(in) {
		wt, ok := want[o.Name]
		if !ok {
			if o.Name == "experts" {
				t.Errorf("fused experts op priced on the DeepGEMM path")
			}
			continue
		}
		got++
		if !near(o.FLOPs, wt.flops, 1e-12) || !near(o.Bytes, wt.bytes, 1e-12) || !near(o.Seconds, wt.seconds, 1e-9) {
			t.Errorf("%s: FLOPs %.6g bytes %.6g s %.6g, want %.6g %.6g %.6g", o.Name, o.FLOPs, o.Bytes, o.Seconds, wt.flops, wt.bytes, wt.seconds)
		}
	}
	if got != len(want) {
		t.Errorf("found %d of the %d DeepGEMM ops", got, len(want))
	}
}

// TestDeepGEMMBufferChargesInputOnce: the gate/up GEMM pays the GEMM
// family's input term on the real tokens only (they are quantised before
// the copy), the down GEMM on the whole buffer's activations.
func TestDeepGEMMBufferChargesInputOnce(t *testing.T) {
	p := idealProfile()
	e := p.GEMM
	e.InputElementNS = 1
	p.GEMMByPrecision = map[string]hardware.OpEfficiency{"fp8_block": e}
	m := mustStep(t, fp8BlockMoE(), withProfile(h100(), p), StepOptions{MoEKernel: MoEKernelDeepGEMM})
	in := &StepInput{Decodes: []int{100, 100}}
	pure := mustStep(t, fp8BlockMoE(), withProfile(h100(), idealProfile()), StepOptions{MoEKernel: MoEKernelDeepGEMM})
	base := map[string]float64{}
	for _, o := range pure.Breakdown(in) {
		base[o.Name] = o.Seconds
	}
	const layers = 3
	rows := DeepGEMMRows(2, 8, 64)
	for _, o := range m.Breakdown(in) {
		var wantInput float64
		switch o.Name {
		case "experts_gemm1":
			wantInput = layers * 1e-9 * 2 * 2048 // 2 tokens x hidden
		case "experts_gemm2":
			wantInput = layers * 1e-9 * float64(rows) * 768 // buffer rows x width
		default:
			continue
		}
		if d := o.Seconds - base[o.Name]; !near(d, wantInput, 1e-9) {
			t.Errorf("%s input time %.6g s, want %.6g s", o.Name, d, wantInput)
		}
	}
}

// TestDeepGEMMDecodeDoesNotFollowBatch is the mechanism behind vLLM 0.12's
// flat TPOT: on the DeepGEMM path a decode step's experts cost about the
// same at 4 and at 16 tokens (the buffer is 16384 rows either way), while
// the fused kernel, which runs only the touched experts' tiles, costs much
// more at 16 tokens than at 4. Catalog model, GPU and profile.
func TestDeepGEMMDecodeDoesNotFollowBatch(t *testing.T) {
	c, err := model.Lookup("Qwen/Qwen3-235B-A22B-FP8")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	experts := func(m *StepModel, n int) float64 {
		dec := make([]int, n)
		for i := range dec {
			dec[i] = 2000
		}
		var s float64
		for _, o := range m.Breakdown(&StepInput{Decodes: dec}) {
			if strings.HasPrefix(o.Name, "experts") {
				s += o.Seconds
			}
		}
		return s
	}
	dg := mustStep(t, c, g, StepOptions{TP: 2, MoEKernel: MoEKernelDeepGEMM})
	fu := mustStep(t, c, g, StepOptions{TP: 2})
	d4, d16 := experts(dg, 4), experts(dg, 16)
	f4, f16 := experts(fu, 4), experts(fu, 16)
	if r := d16 / d4; r > 1.25 {
		t.Errorf("DeepGEMM experts 16/4 tokens = %.2f (%.1f / %.1f ms), want < 1.25", r, 1e3*d16, 1e3*d4)
	}
	if r := f16 / f4; r < 1.5 {
		t.Errorf("fused experts 16/4 tokens = %.2f (%.1f / %.1f ms), want > 1.5", r, 1e3*f16, 1e3*f4)
	}
	if d4 < 1.5*f4 {
		t.Errorf("at 4 tokens DeepGEMM experts %.1f ms, fused %.1f ms: the padded buffer should cost more", 1e3*d4, 1e3*f4)
	}
}

// TestMoEKernelOption: the DeepGEMM path needs block-scaled fp8 experts
// computing at the fp8 peak; an unknown path is an error naming the
// setting; a dense model has no experts to run and keeps the default.
func TestMoEKernelOption(t *testing.T) {
	g := withProfile(h100(), idealProfile())
	for _, tt := range []struct {
		c    *model.Config
		o    StepOptions
		want string
	}{
		{smallMoE(), StepOptions{MoEKernel: MoEKernelDeepGEMM}, "moe_kernel: deepgemm runs 128x128 block-scaled fp8 experts (fp8_block), not bf16"},
		{fp8BlockMoE(), StepOptions{MoEKernel: MoEKernelDeepGEMM, ActDType: "bf16"}, "moe_kernel: deepgemm needs fp8 compute"},
		{fp8BlockMoE(), StepOptions{MoEKernel: "cutlass"}, `moe_kernel: unknown kernel path "cutlass"`},
	} {
		_, err := NewStepModel(tt.c, g, tt.o)
		var ke *MoEKernelError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %+v: error %v, want a *MoEKernelError %q", tt.c.DType, tt.o, err, tt.want)
		}
	}
	dense := llama8b()
	dense.DType = "fp8_block"
	m := mustStep(t, dense, g, StepOptions{MoEKernel: MoEKernelDeepGEMM})
	if m.MoEKernel() != MoEKernelFused || m.Options().MoEKernel != "" {
		t.Errorf("dense model: kernel %q, options %q, want fused and unset", m.MoEKernel(), m.Options().MoEKernel)
	}
	f := mustStep(t, fp8BlockMoE(), g, StepOptions{MoEKernel: MoEKernelFused})
	if f.MoEKernel() != MoEKernelFused || f.Options().MoEKernel != "" {
		t.Errorf("fused: kernel %q, options %q", f.MoEKernel(), f.Options().MoEKernel)
	}
}

// stubPolicy answers every query with path and records the queries.
type stubPolicy struct {
	path    MoEKernel
	queries *[]MoEKernelQuery
}

func (p stubPolicy) MoEKernel(q MoEKernelQuery) MoEKernelChoice {
	*p.queries = append(*p.queries, q)
	return MoEKernelChoice{Path: p.path, Source: "stub source"}
}

// TestMoEKernelAuto: MoEKernelAuto asks the policy with the GPU's
// architecture, the experts' resolved format and compute precision and the
// TP degree, and takes the path it gives, recording its source; without a
// policy it stays fused.
func TestMoEKernelAuto(t *testing.T) {
	g := withProfile(h100(), idealProfile())
	g.Arch = hardware.ArchSM90
	var qs []MoEKernelQuery
	m := mustStep(t, fp8BlockMoE(), g, StepOptions{TP: 2, MoEKernel: MoEKernelAuto, MoEKernelPolicy: stubPolicy{MoEKernelDeepGEMM, &qs}})
	if m.MoEKernel() != MoEKernelDeepGEMM || m.MoEKernelSource() != "stub source" {
		t.Errorf("kernel %q source %q, want deepgemm from the stub", m.MoEKernel(), m.MoEKernelSource())
	}
	if want := (MoEKernelQuery{Arch: hardware.ArchSM90, ExpertFormat: "fp8_block", Compute: "fp8", TP: 2}); len(qs) != 1 || qs[0] != want {
		t.Errorf("queries %+v, want one %+v", qs, want)
	}
	qs = nil
	mustStep(t, fp8BlockMoE(), g, StepOptions{MoEKernel: MoEKernelAuto, ActDType: "bf16", MoEKernelPolicy: stubPolicy{MoEKernelFused, &qs}})
	if len(qs) != 1 || qs[0].Compute != "bf16" {
		t.Errorf("bf16 activations: queries %+v, want compute bf16", qs)
	}
	if m := mustStep(t, fp8BlockMoE(), g, StepOptions{MoEKernel: MoEKernelAuto}); m.MoEKernel() != MoEKernelFused || m.MoEKernelSource() != "" {
		t.Errorf("no policy: kernel %q source %q, want fused", m.MoEKernel(), m.MoEKernelSource())
	}
}

// TestDeepGEMMCachedStepIsExact: the step cache and the decode shortcut
// price the DeepGEMM path bit for bit like Cost.
func TestDeepGEMMCachedStepIsExact(t *testing.T) {
	c, err := model.Lookup("qwen3-235b-a22b-fp8")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	m := mustStep(t, c, g, StepOptions{TP: 1, DP: 2, MoEKernel: MoEKernelDeepGEMM})
	cs := NewCachedStep(m)
	for i := 0; i < 300; i++ {
		in := &StepInput{}
		if i%3 == 0 {
			in.Prefills = append(in.Prefills, Chunk{Tokens: 1 + (i*37)%900, Cached: (i * 101) % 3000, Sampled: i%2 == 0})
		}
		var sum int64
		for j := 0; j < 1+i%24; j++ {
			kv := 1 + (i*13+j*71)%6000
			in.Decodes = append(in.Decodes, kv)
			sum += int64(kv)
		}
		want := m.Cost(in)
		if got := cs.Cost(in); got != want {
			t.Fatalf("step %d: cached %+v != plain %+v", i, got, want)
		}
		if len(in.Prefills) == 0 {
			if got, ok := cs.DecodeCost(len(in.Decodes), sum); ok && got != want {
				t.Fatalf("step %d: DecodeCost %+v != Cost %+v", i, got, want)
			}
		}
	}
}
