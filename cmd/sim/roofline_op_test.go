package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// sim roofline op: the attainable efficiency comes from the GPU's profile
// (never above the roofline), and a measurement faster than the roofline
// is warned about.
func TestRooflineOpAttainableAndWarning(t *testing.T) {
	code, out, errOut := cli(t, "roofline", "op", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16", "--gpu", "h100", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var pa profiledAnalysis
	if err := json.Unmarshal([]byte(out), &pa); err != nil {
		t.Fatal(err)
	}
	if !(pa.ProfileTimeS >= pa.TimeS) || !(pa.AttainablePct > 0 && pa.AttainablePct <= 100) || pa.ProfileKind != "calibrated" {
		t.Errorf("profile time %g s vs roofline %g s, attainable %g%%, kind %q", pa.ProfileTimeS, pa.TimeS, pa.AttainablePct, pa.ProfileKind)
	}
	_, out, errOut = cli(t, "roofline", "op", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16", "--gpu", "h100", "--measured-us", "20")
	if !strings.Contains(errOut, "warning: the measured 20.000 us beats the roofline bound") {
		t.Errorf("no warning for a measurement 7x faster than the roofline: %q", errOut)
	}
	if !strings.Contains(out, "% OF PEAK") || !strings.Contains(out, "ATTAINABLE  ") {
		t.Errorf("table lacks the labelled columns:\n%s", out)
	}
	_, _, errOut = cli(t, "roofline", "op", "gemm", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16", "--gpu", "h100", "--measured-us", "200")
	if strings.Contains(errOut, "warning") {
		t.Errorf("warned about a plausible measurement: %q", errOut)
	}
}

// The phase header names the profile in a few words; its provenance is
// printed with --verbose.
func TestPhaseProvenanceOnlyVerbose(t *testing.T) {
	_, out, _ := cli(t, "roofline", "phase", "--model", "llama-3.1-8b", "--gpu", "h100", "--prompt", "128", "--gen", "8")
	first := strings.SplitN(out, "\n", 2)[0]
	if len(first) > 200 || strings.Contains(out, "profile source:") {
		t.Errorf("header carries the provenance (%d chars): %q", len(first), first)
	}
	_, out, _ = cli(t, "roofline", "phase", "--model", "llama-3.1-8b", "--gpu", "h100", "--prompt", "128", "--gen", "8", "--verbose")
	if !strings.Contains(out, "profile source: kernels kernels/h100_sxm (6 files) + ") || !strings.Contains(out, " + moe kernels/h100_sxm/moe.csv") ||
		!strings.Contains(out, "\n  kernels: sim calibrate --gpu h100 --kernels") || !strings.Contains(out, "\n  moe: sim calibrate moe --gpu h100") {
		t.Errorf("--verbose lacks the provenance:\n%s", out)
	}
}
