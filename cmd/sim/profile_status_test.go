package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/sweep"
)

// sim run --json and run.json say whether the GPU was priced from a
// calibrated profile, one borrowed from a GPU of its architecture family,
// or the built-in defaults (v100: no sm7x GPU is calibrated).
func TestRunProfileStatus(t *testing.T) {
	for _, tc := range []struct{ gpu, want, text string }{
		{"h100", "calibrated", "GPU profile: calibrated for"},
		{"h100-pcie", "borrowed:h100", "GPU profile: borrowed from h100 (calibrated for"},
		{"v100", "defaults", "GPU profile: defaults (built-in default efficiencies"},
	} {
		out := filepath.Join(t.TempDir(), "x")
		code, stdout, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--gpu", tc.gpu, "--max-model-len", "8192", "--json", "--out", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.gpu, code, errOut)
		}
		var res struct {
			Status string `json:"gpu_profile_status"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		if res.Status != tc.want {
			t.Errorf("%s: --json gpu_profile_status %q, want %q", tc.gpu, res.Status, tc.want)
		}
		b, err := os.ReadFile(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Summary struct {
				Status string `json:"gpu_profile_status"`
			} `json:"summary"`
			Config struct {
				Status string `json:"gpu_profile_status"`
			} `json:"config"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Summary.Status != tc.want || rec.Config.Status != tc.want {
			t.Errorf("%s: run.json summary %q config %q, want %q", tc.gpu, rec.Summary.Status, rec.Config.Status, tc.want)
		}
		code, text, errOut := cli(t, "run", "--workload", "testdata/small.yaml", "--gpu", tc.gpu, "--max-model-len", "8192", "--quiet")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.gpu, code, errOut)
		}
		if !strings.Contains(text, tc.text) {
			t.Errorf("%s: summary lacks %q:\n%s", tc.gpu, tc.text, text)
		}
	}
}

// The sweep table has a profile column, and a recommendation priced from
// the built-in defaults carries a warning; a calibrated one does not.
func TestSweepTableProfileWarning(t *testing.T) {
	row := func(gpu string, st hardware.ProfileStatus) sweep.Row {
		n := math.NaN()
		return sweep.Row{Config: sweep.Config{GPU: gpu, TP: 1, MaxNumSeqs: 64, MaxNumBatchedTokens: 2048},
			Status: sweep.StatusOK, MaxRateRPS: 3, Recommended: true, ProfileStatus: st,
			TTFTP99Ms: n, TPOTP99Ms: n, OutputTokensPerSPerGPU: n, TokensPerSPerUser: n, CostPerHour: n, CostMTok: n}
	}
	const warn = "warning: h100-pcie is priced with built-in default efficiencies, not a calibrated profile; treat its rates as rough"
	for _, tc := range []struct {
		row      sweep.Row
		cell     string
		wantWarn bool
	}{
		{row("h100-pcie", hardware.StatusDefaults), "defaults", true},
		{row("h100", hardware.StatusCalibrated), "calibrated", false},
	} {
		var b bytes.Buffer
		res := &sweep.Result{Rows: []sweep.Row{tc.row}, Recommended: 0, GridSize: 1}
		if err := writeSweepTable(&b, res); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if !strings.Contains(lines[0], "profile") || !strings.Contains(lines[1], " "+tc.cell+" ") {
			t.Errorf("%s: no profile column %q:\n%s", tc.row.GPU, tc.cell, b.String())
		}
		if got := strings.Contains(b.String(), "warning: "); got != tc.wantWarn {
			t.Errorf("%s: warning %v, want %v:\n%s", tc.row.GPU, got, tc.wantWarn, b.String())
		}
		if tc.wantWarn && !strings.Contains(b.String(), "recommended: #0 h100-pcie tp 1 max_num_seqs 64 max_num_batched_tokens 2048 (3.00 req/s per instance)\n"+warn+"\n") {
			t.Errorf("warning not under the recommendation:\n%s", b.String())
		}
	}
}
