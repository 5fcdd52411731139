package main

import (
	"fmt"

	"io"
	"sort"

	"github.com/roofsim/roofsim/hardware"

	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// writeSummaryText prints a run's summary for people.
func writeSummaryText(w io.Writer, p *runPlan, res *sim.Result, out *outputDir) error {
	r := p.Resolved
	s := res.Summary
	fmt.Fprintf(w, "roofsim %s  %s on %s x%d (tp %d, %d replica(s), %s)\n", version, r.Model, r.GPU, r.TP*r.Replicas, r.TP, r.Replicas, r.Router)
	fmt.Fprintf(w, "weights %s, kv cache %s, KV %d blocks x %d tokens", r.Weights, r.KVCacheDType, r.Serving.NumGPUBlocks, r.Serving.BlockSize)
	if r.NumGPUBlocksPinned {
		fmt.Fprint(w, " (pinned)")
	}
	fmt.Fprintf(w, ", max_num_seqs %d, max_num_batched_tokens %d, seed %d\n", r.Serving.MaxNumSeqs, r.Serving.MaxNumBatchedTokens, r.Seed)
	fmt.Fprintf(w, "GPU profile: %s\n\n", profileLabel(p.GPU.EffectiveProfile()))

	fmt.Fprintf(w, "requests    %d arrived, %d completed, %d rejected", res.Arrived, res.Completed, res.Rejected)
	if res.InFlight > 0 {
		fmt.Fprintf(w, ", %d in flight at the cut-off", res.InFlight)
	}
	fmt.Fprintln(w)
	for _, reason := range sortedKeys(s.RejectedReasons) {
		n := s.RejectedReasons[reason]
		fmt.Fprintf(w, "            rejected %d: %s\n", n, reason)
	}
	fmt.Fprintf(w, "duration    %.3f s simulated, %d steps\n", s.DurationS, res.Steps)
	fmt.Fprintf(w, "throughput  %.3f req/s, %.1f output tok/s, %.1f input tok/s\n", s.ThroughputRPS, s.OutputTokensPerS, s.InputTokensPerS)
	fmt.Fprintf(w, "preemptions %d   KV blocks peak %d of %d\n\n", s.Preemptions, s.KVBlocks.PeakUsed, s.KVBlocks.Total)

	tw := newTable(w)
	fmt.Fprintln(tw, "latency (ms)\tmean\tp50\tp90\tp99")
	row := func(name string, d traces.Dist) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, fmtF(d.Mean, 2), fmtF(d.P50, 2), fmtF(d.P90, 2), fmtF(d.P99, 2))
	}
	row("TTFT", s.TTFTms)
	row("TPOT", s.TPOTms)
	row("ITL", s.ITLms)
	row("E2E", s.E2Ems)
	row("queue", s.QueueMs)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.PerClient) > 1 {
		fmt.Fprintln(w)
		tw = newTable(w)
		fmt.Fprintln(tw, "client\tcompleted\trejected\treq/s\ttok/s\tTTFT p50\tTTFT p99\tTPOT p50\tTPOT p99\tE2E p99")
		for _, c := range s.PerClient {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Name, c.Completed, c.Rejected,
				fmtF(c.ThroughputRPS, 3), fmtF(c.OutputTokensPerS, 1), fmtF(c.TTFTms.P50, 2), fmtF(c.TTFTms.P99, 2),
				fmtF(c.TPOTms.P50, 2), fmtF(c.TPOTms.P99, 2), fmtF(c.E2Ems.P99, 2))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if out != nil {
		fmt.Fprintf(w, "\ntraces written to %s\n", out.dir)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// profileLabel is a one-line description of a profile; `sim gpus --json`
// shows its full source.
func profileLabel(p *hardware.Profile) string {
	if !p.Calibrated {
		return "built-in defaults (uncalibrated)"
	}
	l := "calibrated"
	if p.Engine != "" {
		l += " for " + p.Engine
	}
	return l + " (source: sim gpus --json)"
}
