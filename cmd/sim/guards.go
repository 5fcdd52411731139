package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
)

// Resource guards: a run whose work would exceed a bound is refused before
// it starts, with the estimate and the flag that lifts the bound. Memory is
// flat in the number of requests; time is not, so the bound is on requests.

// addMaxRequestsFlag registers --max-requests on cmd.
func addMaxRequestsFlag(cmd *cobra.Command, dst *int) {
	cmd.Flags().IntVar(dst, "max-requests", limits.MaxRequestsDefault,
		"refuse a workload that generates more requests than this (at most 1e8)")
}

// guardRequests refuses a run whose request count (exact, or expected from
// rates and windows) is above max, and caps the generator at max for
// workloads whose size is random (bursty arrivals, duration-bounded closed
// loops): they stop there with exceededError. It also refuses clients none
// of whose requests fits the model length.
func guardRequests(cmd *cobra.Command, p *pipeline.Plan, rate *float64, g *workload.Generator, max int) error {
	if err := limits.IntIn(max, 1, limits.MaxRequests); err != nil {
		return usageError{fmt.Errorf("%s: %w", flagOrigin(cmd, "max-requests", "--max-requests"), err)}
	}
	if rate != nil && (p.Settings.Trace != "" || p.Spec.TotalRate() == 0) {
		what := "the workload has no open-loop client (closed-loop clients send as fast as they are served)"
		if p.Settings.Trace != "" {
			what = "a replayed trace keeps its own arrival times"
		}
		return usageError{fmt.Errorf("%s: not used: %s", flagOrigin(cmd, "rate", "--rate"), what)}
	}
	est := 0.0
	if n, known := g.Totals(); known {
		est = float64(n)
	} else if p.Settings.Trace == "" {
		est = p.Requests().EstimateRequests()
	}
	if est > float64(max) {
		return overMaxRequests(est, max)
	}
	if p.Settings.Trace == "" {
		if err := p.Spec.CheckContext(p.Prepared.Scheduler.MaxModelLen); err != nil {
			return err
		}
	}
	g.SetMaxRequests(max)
	return nil
}

// overMaxRequests is the refusal of a workload expected to generate est
// requests under --max-requests max. It suggests a --max-requests that
// allows the workload (10% headroom, two significant digits) but never one
// above the flag's own maximum, limits.MaxRequests: a workload over that is
// over the hard limit, and no flag value lets it run.
func overMaxRequests(est float64, max int) error {
	if est > limits.MaxRequests {
		return fmt.Errorf("this workload generates %s requests, above the hard limit of %d requests per run (--max-requests %d); make it smaller (fewer requests, a shorter duration or a lower rate)",
			humanCount(est), int64(limits.MaxRequests), max)
	}
	suggest := min(roundUp2(est*1.1), int64(limits.MaxRequests))
	return fmt.Errorf("this workload generates %s requests, above --max-requests %d; pass --max-requests %d to allow it",
		humanCount(est), max, suggest)
}

// exceededError is the error of a run stopped by the --max-requests cap.
func exceededError(max int) error {
	if max >= limits.MaxRequests {
		return fmt.Errorf("the workload generated more than %d requests, the hard limit per run (its size is random: bursty arrivals or a duration-bounded closed loop); nothing written; make it smaller", max)
	}
	return fmt.Errorf("the workload generated more than --max-requests %d requests (its size is random: bursty arrivals or a duration-bounded closed loop); nothing written; pass a larger --max-requests (at most %d) to allow it", max, int64(limits.MaxRequests))
}

// roundUp2 rounds x up to two significant digits (3.96e6 -> 4000000).
func roundUp2(x float64) int64 {
	if x < 100 {
		return int64(math.Ceil(x))
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	return int64(math.Ceil(x/p) * p)
}

// humanCount writes a count as 3.5M, 120k or 42.
func humanCount(x float64) string {
	switch {
	case x >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', 1, 64) + "M"
	case x >= 1e4:
		return strconv.FormatFloat(x/1e3, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}
