package llamacpp

import (
	"math"
	"testing"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// TestFitRecoversSyntheticProfile generates rows from the step model with a
// known profile and checks the fit reproduces them and recovers the
// well-determined parameters (memory max from decode, GEMM max from large
// prefill).
func TestFitRecoversSyntheticProfile(t *testing.T) {
	g := gb10GPU(t)
	truth := throughput.Profile([]float64{fit.Logit(0.4), math.Log(3e9), fit.Logit(0.88), math.Log(2e6), fit.Logit(0.2),
		fit.Logit(0.3), math.Log(2e9), fit.Logit(0.6), math.Log(150), math.Log(3), fit.Logit(0.2), math.Log(30), math.Log(0.05),
		fit.Logit(0.6)})
	gt := g.Clone()
	gt.Profile = truth
	var rows []Row
	line := 2
	for _, spec := range []struct{ model, format string }{
		{"ggml-org/Qwen2.5-Coder-7B-Q8_0-GGUF", "Q8_0 (GGUF)"},
		{"ggml-org/Qwen3-Coder-30B-A3B-Instruct-Q8_0-GGUF", "Q8_0 (GGUF)"},
		{"unsloth/Qwen3-8B-GGUF", "Q4_K_M (GGUF)"},
	} {
		base := Row{Engine: "llama.cpp b7000 (x), ubatch 2048", Model: spec.model, WeightFormat: spec.format, Unit: "tok/s", Batch: 1}
		var rs []Row
		for _, d := range []int{0, 4096, 16384} {
			p, dd := base, base
			p.Kind, p.Prompt, p.Depth = "prefill", 2048, d
			dd.Kind, dd.Gen, dd.Depth = "decode", 32, d
			rs = append(rs, p, dd)
		}
		for _, b := range []int{1, 4, 16} {
			p, dd := base, base
			p.Kind, p.Prompt, p.Batch = "prefill", 512, b
			dd.Kind, dd.Gen, dd.Depth, dd.Batch = "decode", 32, 512, b
			rs = append(rs, p, dd)
		}
		for _, r := range rs {
			m, err := MapRow(r)
			if err != nil {
				t.Fatal(err)
			}
			sm, err := roofline.NewStepModel(m.Config, gt, m.Options)
			if err != nil {
				t.Fatal(err)
			}
			ph, err := Phase(r)
			if err != nil {
				t.Fatal(err)
			}
			v, err := throughput.PredictTokensPerS(sm, ph)
			if err != nil {
				t.Fatal(err)
			}
			r.Value, r.Line = v, line
			line++
			rows = append(rows, r)
		}
	}
	res, err := throughput.Calibrate(throughput.Options{GPU: g, Source: &Bench{File: "synthetic", Rows: rows}, MaxEvals: 2500})
	if err != nil {
		t.Fatal(err)
	}
	if res.TrainPrefillMedianAPE > 3 || res.TrainDecodeMedianAPE > 3 {
		t.Errorf("synthetic rows not reproduced: median error prefill %.2f%% decode %.2f%%", res.TrainPrefillMedianAPE, res.TrainDecodeMedianAPE)
	}
	p := res.Profile
	if e := math.Abs(p.GEMM.Memory.Max-0.88) / 0.88; e > 0.08 {
		t.Errorf("memory max %.3f, want 0.88 within 8%%", p.GEMM.Memory.Max)
	}
	// The rows price GEMMs in q8_0 and a q4_k/q6_k blend only, so what they
	// pin down is each format's efficiency (eff0 and the bits cost trade
	// off along 1/eff0 + c bits): check the q8_0 one.
	want := truth.GEMMByPrecision["q8_0"].Compute.Max
	if got := p.GEMMByPrecision["q8_0"].Compute.Max; math.Abs(got-want)/want > 0.15 {
		t.Errorf("q8_0 gemm compute max %.3f, want %.3f within 15%%", got, want)
	}
}

// TestDecodeNeverBeatsBandwidth: for models the file never measured, the
// shipped (or freshly fitted) profile never decodes faster than the weight
// bytes read per token over the nominal 273 GB/s.
func TestDecodeNeverBeatsBandwidth(t *testing.T) {
	g := gb10GPU(t)
	for _, tc := range []struct{ model, mix string }{{"qwen3-14b", ""}, {"llama-3.1-70b", ""}, {"qwen3-8b", ""}, {"gpt-oss-120b", "moe"}} {
		cfg, err := model.Lookup(tc.model)
		if err != nil {
			t.Fatal(err)
		}
		var opts roofline.StepOptions
		if cfg.MoE == nil {
			mix, err := Q4KMWeightMix(cfg)
			if err != nil {
				t.Fatal(err)
			}
			opts = roofline.StepOptions{WeightMix: mix, EmbeddingDType: "q4_k", LMHeadDType: "q6_k"}
		} else {
			opts = roofline.StepOptions{WeightDType: "q8_0", ExpertDType: "mxfp4", EmbeddingDType: "q8_0", LMHeadDType: "q8_0"}
		}
		sm, err := roofline.NewStepModel(cfg, g, opts)
		if err != nil {
			t.Fatal(err)
		}
		ph, err := roofline.Phases(sm, roofline.PhaseRequest{Batch: 1, Gen: 32})
		if err != nil {
			t.Fatal(err)
		}
		pc := cfg.Params()
		// Bytes one decode token must read: all weights but the embedding
		// table (one row of it is gathered); for MoE only top-k experts.
		read := sm.WeightBytesPerGPU() - pc.Embedding*0.5
		if cfg.MoE != nil {
			read -= pc.RoutedExperts * (1 - float64(cfg.MoE.TopK)/float64(cfg.MoE.NumExperts)) * 4.25 / 8
		}
		bound := g.BandwidthBytesPerSec() / read
		t.Logf("%s: predicted %.1f tok/s, bandwidth bound %.1f", tc.model, ph[0].TokensPerS, bound)
		if ph[0].TokensPerS > bound {
			t.Errorf("%s: decode %.1f tok/s beats the bandwidth bound %.1f", tc.model, ph[0].TokensPerS, bound)
		}
	}
}

// TestLeaveOneModelOutSane runs a short LOMO and checks every held-out
// model gets finite, plausible errors (the target itself is reported in
// docs/accuracy-gb10.md, not asserted).
func TestLeaveOneModelOutSane(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	rows, err := ReadRows(gb10File(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := throughput.LeaveOneModelOutProgress(gb10GPU(t), &Bench{File: "measurements.csv", Rows: rows}, 300, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) < 5 {
		t.Fatalf("only %d models cross-validated", len(rep.Models))
	}
	for _, m := range rep.Models {
		if m.N == 0 || math.IsNaN(m.DecodeMedian) && math.IsNaN(m.PrefillMedian) {
			t.Errorf("%s: no errors computed", m.Model)
		}
		if m.DecodeMedian > 100 || m.PrefillMedian > 100 {
			t.Errorf("%s %s: implausible held-out error prefill %.0f%% decode %.0f%%", m.Model, m.Format, m.PrefillMedian, m.DecodeMedian)
		}
	}
	t.Logf("LOMO (short search): prefill median %.1f%%, decode median %.1f%%", rep.PrefillMedian, rep.DecodeMedian)
}
