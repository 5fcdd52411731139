package main

import (
	"fmt"

	"io"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/pipeline"

	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
)

// writeSummaryText prints a run's summary for people.
// Names and paths from the input reach the terminal only through termSafe.
func writeSummaryText(w io.Writer, p *pipeline.Plan, res *sim.Result, result *traces.Result, out *outputDir) error {
	w = termWriter{w}
	r := p.Settings
	s := res.Summary
	layout := fmt.Sprintf("tp %d", r.TP)
	if r.DP > 1 {
		layout += fmt.Sprintf(", dp %d", r.DP)
	}
	if r.EP > 1 {
		layout += fmt.Sprintf(", ep %d", r.EP)
	}
	if pl := p.Pools; p.Config.Disagg != nil {
		fmt.Fprintf(w, "roofsim %s  %s on %d prefill + %d decode GPUs (disaggregated)\n", version, r.Model, pl[0].Replicas*pl[0].TP, pl[1].Replicas*pl[1].TP)
	} else {
		fmt.Fprintf(w, "roofsim %s  %s on %s x%d (%s, %d replica(s), %s)\n", version, r.Model, r.GPU, r.TP*max(r.DP, 1)*r.Replicas, layout, r.Replicas, r.Router)
	}
	fmt.Fprintf(w, "weights %s, kv cache %s, KV %d blocks x %d tokens", r.Weights, r.KVCacheDType, r.Serving.NumGPUBlocks, r.Serving.BlockSize)
	if r.NumGPUBlocksPinned {
		fmt.Fprint(w, " (pinned)")
	}
	fmt.Fprintf(w, ", max_num_seqs %d, max_num_batched_tokens %d, seed %d\n", r.Serving.MaxNumSeqs, r.Serving.MaxNumBatchedTokens, r.Seed)
	if q := p.Model.Quant; q != nil {
		fmt.Fprintf(w, "checkpoint quantisation: %s\n", q)
	}
	if n := p.Prepared.MoEKernelNote; n != "" {
		fmt.Fprintf(w, "%s\n", n)
	}
	if n := p.Prepared.HybridNote; n != "" {
		fmt.Fprintf(w, "%s\n", n)
	}
	for _, n := range p.ModelNotes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	// How the mixers and the proposer are priced, and which release's
	// kernel profile stands in for the run's (run.json's notes hold them too).
	for _, n := range []string{p.Prepared.MixerKernelNote, p.Prepared.SpeculativeNote, p.Prepared.ProfileNote} {
		if n != "" {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	fmt.Fprintf(w, "GPU profile: %s\n\n", profileLine(p.GPU.EffectiveProfile()))
	if result.Pools != nil {
		writePoolsText(w, p, result.Pools)
	}

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
	if l := result.Load; l != nil && l.Overloaded {
		fmt.Fprintf(w, "load        %s\n", l.Summary())
	}
	fmt.Fprintln(w)
	var b strings.Builder
	writeResultText(&b, result)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if len(s.PerClient) > 1 {
		fmt.Fprintln(w)
		tw := newTable(w)
		fmt.Fprintln(tw, "client\tcompleted\tfailed\treq/s\ttok/s\tMedian TTFT\tP99 TTFT\tMedian TPOT\tP99 TPOT\tP99 E2EL")
		for _, c := range s.PerClient {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", termSafe(c.Name, ""), c.Completed, c.Rejected,
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

// profileLine is the summary's GPU-profile line: the status first, so that
// a GPU priced from the built-in defaults reads as such at a glance.
func profileLine(prof *hardware.Profile) string {
	if prof.Status() == hardware.StatusDefaults {
		return "defaults (built-in default efficiencies, not a calibrated profile; treat the rates as rough)"
	}
	return pipeline.ProfileLabel(prof)
}
