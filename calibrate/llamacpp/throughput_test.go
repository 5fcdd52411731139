package llamacpp

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
)

func TestCalibrateThroughputGB10(t *testing.T) {
	file := gb10File(t)
	g := gb10GPU(t)
	bench, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	res, err := throughput.Calibrate(throughput.Options{GPU: g, Source: bench, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	t.Logf("evals %d, used %d, excluded %d; train median APE prefill %.1f%% decode %.1f%%", res.Evals, len(res.Used), len(res.Excluded),
		res.TrainPrefillMedianAPE, res.TrainDecodeMedianAPE)
	t.Logf("profile: gemm %+v moe %+v attnP %+v attnD %+v step %.1fus perreq %.1fus graph %.3f", p.GEMM, p.MoE.Compute,
		p.AttentionPrefill.Compute, p.AttentionDecode.Memory, p.StepOverheadUS, p.PerRequestOverheadUS, p.GraphLaunchFactor)
	for _, w := range res.Warnings {
		t.Log("warning:", w)
	}
	for _, e := range []hardware.OpEfficiency{p.GEMM, p.MoE, p.AttentionPrefill, p.AttentionDecode, p.Elementwise} {
		if e.Compute.Max > 1 || e.Memory.Max > 1 || e.LaunchUS < 0 {
			t.Errorf("unphysical efficiency %+v", e)
		}
	}
	for k, e := range p.GEMMByPrecision {
		if !(e.Compute.Max > 0 && e.Compute.Max <= p.GEMM.Compute.Max) {
			t.Errorf("gemm_by_precision.%s: compute max %.3f not in (0, gemm max %.3f]", k, e.Compute.Max, p.GEMM.Compute.Max)
		}
	}
	if p.StepOverheadUS < 0 || p.PerRequestOverheadUS < 0 || p.GraphLaunchFactor > 1 {
		t.Errorf("unphysical overheads %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
	g2 := g.Clone()
	g2.Profile = p
	rep, err := throughput.Validate(g2, bench)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

var updateGB10 = flag.Bool("update-gb10", false, "rewrite hardware/profiles/gb10.yaml and docs/accuracy-gb10.md from the gb10 measurements")

// TestWriteGB10Profile regenerates the shipped gb10 profile and the LOMO
// accuracy page when run with -update-gb10; otherwise it checks that the
// shipped profile is calibrated and parses.
func TestWriteGB10Profile(t *testing.T) {
	if !*updateGB10 {
		g := gb10GPU(t)
		if p := g.EffectiveProfile(); !p.Calibrated {
			t.Fatal("the shipped gb10 profile is not calibrated: write hardware/profiles/gb10.yaml (run this test with -update-gb10)")
		}
		return
	}
	file := gb10File(t)
	g := gb10GPU(t)
	g.Profile = nil
	rows, err := ReadRows(file)
	if err != nil {
		t.Fatal(err)
	}
	const label = "../shared/data/gb10/measurements.csv"
	bench := &Bench{File: label, Rows: rows}
	res, err := throughput.Calibrate(throughput.Options{GPU: g, Source: bench, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	data, err := res.ProfileYAML()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hardware.ParseProfile(data, "gb10.yaml"); err != nil {
		t.Fatalf("written profile does not parse: %v", err)
	}
	if err := os.WriteFile(filepath.Join("..", "..", "hardware", "profiles", "gb10.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := throughput.LeaveOneModelOutProgress(g, bench, 2500, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("# GB10 (DGX Spark) throughput accuracy\n\n")
	b.WriteString("Leave-one-model-out cross-validation of the llama.cpp throughput calibration:\n")
	b.WriteString("for each model, the profile is fitted on every other model's rows and then\n")
	b.WriteString("predicts all of that model's llama-bench / llama-batched-bench rows (every depth\n")
	b.WriteString("and batch). Errors are absolute percentages of measured tok/s.\n\n")
	b.WriteString("Regenerate:\n\n")
	b.WriteString("    sim calibrate --gpu gb10 --throughput ../shared/data/gb10/measurements.csv --out hardware/profiles/gb10.yaml --profile-only\n")
	b.WriteString("    go build -o bin/sim ./cmd/sim\n")
	b.WriteString("    sim validate throughput --gpu gb10 --file ../shared/data/gb10/measurements.csv --lomo\n\n")
	b.WriteString("(`sim validate throughput --gpu gb10 --file ../shared/data/gb10/measurements.csv`\n")
	b.WriteString("prints the in-sample table for the shipped profile.)\n\n```\n")
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("```\n")
	if err := os.WriteFile(filepath.Join("..", "..", "docs", "accuracy-gb10.md"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}
