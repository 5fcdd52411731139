package main

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
)

// writePoolsText prints a disaggregated run's pools: each pool's GPUs, load
// and KV occupancy, and the KV transfers between them.
func writePoolsText(w io.Writer, p *pipeline.Plan, ps *traces.Pools) {
	d := p.Config.Disagg
	fmt.Fprintf(w, "disaggregated: %dP%dD, KV link %.0f Gbit/s per GPU + %.0f µs per transfer\n",
		ps.Prefill.Replicas, ps.Decode.Replicas, d.LinkBytesPerS*8/1e9, d.LinkLatency.Seconds()*1e6)
	tw := newTable(w)
	fmt.Fprintln(tw, "pool\tinstances\tGPUs\tutil\tsteps\tmedian queue\tp99 queue\tKV blocks\tKV peak\tKV mean\tpreempt")
	for _, pl := range []struct {
		name string
		st   *traces.PoolStats
	}{{"prefill", &ps.Prefill}, {"decode", &ps.Decode}} {
		st := pl.st
		fmt.Fprintf(tw, "%s\t%d x tp %d\t%d x %s\t%s%%\t%d\t%s ms\t%s ms\t%d\t%d\t%s%%\t%d\n", pl.name, st.Replicas, st.TP,
			st.Replicas*st.TP, termSafe(st.GPU, ""), fmtF(100*st.Utilization, 1), st.Steps, fmtF(st.Queue.P50Ms, 2), fmtF(st.Queue.P99Ms, 2),
			st.KVBlocksTotal, st.KVBlocksPeak, fmtF(100*st.KVOccupancyMean, 1), st.Preemptions)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "KV transfer: median %s ms, p99 %s ms (%s MB per GPU per request); wait for decode blocks median %s ms, p99 %s ms\n\n",
		fmtF(ps.KVTransfer.P50Ms, 2), fmtF(ps.KVTransfer.P99Ms, 2), fmtF(ps.KVTransferBytesMean/1e6, 1), fmtF(ps.KVWait.P50Ms, 2), fmtF(ps.KVWait.P99Ms, 2))
}
