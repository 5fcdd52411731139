package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/shareddata"
)

// shippedPlan is the plan of the shipped profiles, from this directory.
const shippedPlan = "../../" + defaultPlanFile

func TestCalibratePlanBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(bad, []byte("steps:\n  - run: sim run --workload x.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tolerance", "-1"}, "--tolerance: must be in [0, 0.1]"},
		{[]string{"--jobs", "-2"}, "--jobs: must be >= 0"},
		{[]string{"--keep", dir}, "--keep goes with --check"},
		{[]string{"--plan", filepath.Join(dir, "none.yaml")}, "--plan:"},
		{[]string{"--plan", bad}, "steps[0].run: \"sim run --workload x.yaml\": want a `sim calibrate ...` command"},
		{[]string{"--plan", shippedPlan, "--only", "hardware/profiles/h100/vllm-9.9.9.yaml"}, "--only: hardware/profiles/h100/vllm-9.9.9.yaml: no step builds it"},
	} {
		code, out, errOut := cli(t, append([]string{"calibrate", "plan"}, c.args...)...)
		if code == 0 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one error line with %q", c.args, code, out, errOut, c.want)
		}
	}
}

// ciPlanSubset are the profiles TestShippedProfilesRebuild rebuilds: the
// whole plan takes longer than a test should on two cores, so CI rebuilds
// the RTX PRO 6000 profile (the kernel fit and the MoE refit) and the GB10
// profile (the throughput fit, which writes its engine profile too), and
// checks them; b200's kernel fit is left out for time.
const ciPlanSubset = "hardware/profiles/rtx-pro-6000/vllm-0.24.0.yaml,hardware/profiles/gb10.yaml"

// TestShippedProfilesRebuild runs `sim calibrate plan --check` on
// ciPlanSubset: the shipped files must equal a rebuild from the shared data
// within the default tolerance. It needs ../shared/data (or ROOFSIM_DATA);
// without it the test fails unless ROOFSIM_SKIP_DATA=1 (shareddata).
func TestShippedProfilesRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds a profile from the kernel tables (minutes of CPU)")
	}
	t.Setenv("ROOFSIM_DATA", filepath.Dir(shareddata.Path(t, "aic")))
	code, out, errOut := cli(t, "calibrate", "plan", "--check", "--quiet", "--plan", shippedPlan, "--only", ciPlanSubset)
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	for _, f := range strings.Split(ciPlanSubset, ",") {
		if !strings.Contains(out, "ok "+f+"\n") {
			t.Errorf("no ok line for %s:\n%s", f, out)
		}
	}
}

// A step that fails stops the plan: the error names the step and its
// command (a *planStepError), nothing is written and the exit is non-zero.
// Needs no data: the step fails on its --gpu before reading any table.
func TestCalibratePlanStepFails(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ROOFSIM_DATA", dir)
	if err := os.Mkdir(filepath.Join(dir, "hardware"), 0o755); err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "hardware", "plan.yaml")
	doc := "steps:\n" +
		"  - run: sim calibrate --aic ../shared/data/aic --gpu no-such-gpu --engine vllm@0.24.0 --out hardware/profiles/x/vllm-0.24.0.yaml --profile-only\n" +
		"  - run: sim calibrate moe --aic ../shared/data/aic --gpu no-such-gpu --engine vllm@0.24.0 --update hardware/profiles/x/vllm-0.24.0.yaml\n"
	if err := os.WriteFile(planFile, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "calibrate", "plan", "--plan", planFile, "--quiet")
	if code == 0 || out != "" || !strings.Contains(errOut, "steps[0] (sim calibrate --aic") || !strings.Contains(errOut, "no-such-gpu") {
		t.Errorf("exit %d, stdout %q, stderr %q; want steps[0]'s error", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "hardware", "profiles", "x", "vllm-0.24.0.yaml")); !os.IsNotExist(err) {
		t.Errorf("a failed plan wrote its profile: %v", err)
	}
	p, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var se *planStepError
	err = runCalibratePlan(context.Background(), streams{out: io.Discard, errOut: io.Discard}, &calibratePlanOptions{Plan: planFile, Tolerance: 1e-6, Quiet: true})
	if !errors.As(err, &se) || se.Index != 0 || !strings.Contains(string(p), se.Command) {
		t.Errorf("error %v, want a *planStepError of steps[0]", err)
	}
}
