package main

import (
	"strings"
	"testing"
)

// TestSweepMaxRequests: a sweep whose probes may simulate more than
// --max-requests requests in all, or whose --requests alone is above it, is
// refused before any simulation with one error naming the flag; lifting the
// cap lets it run.
func TestSweepMaxRequests(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	base := []string{"sweep", "--workload", w, "--gpus", "h100,a100-80gb", "--tp", "1,2", "--slo", "ttft_p99=400ms", "-q"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		// 4 configurations x (4 + 2) probes x 500 requests = 12,000.
		{[]string{"--requests", "500", "--probes", "4", "--max-requests", "10000"}, exitUsage,
			"--max-requests: this sweep may simulate 12k requests (4 configurations x 6 probes x 500 requests), above --max-requests 10000"},
		{[]string{"--requests", "20000", "--max-requests", "10000"}, exitUsage, "--requests: 20k requests a probe is above --max-requests 10000"},
		// --requests 0: the workload's own 100 requests a probe.
		{[]string{"--requests", "0", "--probes", "4", "--max-requests", "50"}, exitUsage, "--requests: 100 requests a probe is above --max-requests 50"},
		{[]string{"--max-requests", "0"}, exitUsage, "--max-requests: must be in [1, 100000000], got 0"},
		// The default cap (50M) refuses 4 x 12 x 2M.
		{[]string{"--requests", "2000000"}, exitUsage, "above --max-requests 50000000"},
	} {
		code, _, stderr := sweepCLI(t, dir, append(base, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	code, _, stderr := sweepCLI(t, dir, append(base, "--requests", "500", "--probes", "4", "--max-requests", "12000")...)
	if code != 0 {
		t.Errorf("at the cap: exit %d, stderr %q", code, stderr)
	}
}

// TestSweepTooShortTable: a sweep of probes too short to measure a rate
// says so in the row's note and instead of a recommendation.
func TestSweepTooShortTable(t *testing.T) {
	dir, w := sweepWorkloadFile(t)
	code, stdout, stderr := sweepCLI(t, dir, "sweep", "--workload", w, "--gpus", "h100", "--slo", "ttft_p99=500ms,tpot_p99=50ms",
		"--target-rate", "40", "--requests", "20", "--probes", "4", "-q")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"#0: probe too short: all 20 requests arrived before the first finished; raise --requests",
		"no configuration recommended: every one that met the SLO was measured by a probe too short",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
}
