package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/roofsim/roofsim/traces"
	"github.com/spf13/cobra"
)

// resultOptions are the flags that shape a run's result the way
// vllm bench serve's do.
type resultOptions struct {
	Percentiles string
	Goodput     []string
}

func addResultFlags(cmd *cobra.Command, o *resultOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Percentiles, "metric-percentiles", "50,90,99",
		"comma-separated percentiles of TTFT, TPOT, ITL and E2EL to report (keys pNN_ttft_ms, as vllm bench serve's --metric-percentiles)")
	f.StringSliceVar(&o.Goodput, "goodput", nil,
		`SLOs in ms that make a request "good", as vllm bench serve's --goodput: "ttft:500 tpot:50" or ttft:500,tpot:50 (keys ttft, tpot, e2el); adds request_goodput`)
}

// parsed returns the percentiles and SLOs, with errors naming the flag.
func (o *resultOptions) parsed(cmd *cobra.Command) ([]float64, traces.Goodput, error) {
	ps, err := traces.ParsePercentiles(o.Percentiles)
	if err != nil {
		return nil, traces.Goodput{}, fmt.Errorf("%s: %w", flagOrigin(cmd, "metric-percentiles", "--metric-percentiles"), err)
	}
	g, err := traces.ParseGoodput(o.Goodput)
	if err != nil {
		return nil, traces.Goodput{}, fmt.Errorf("%s: %w", flagOrigin(cmd, "goodput", "--goodput"), err)
	}
	return ps, g, nil
}

// writeResultText prints the result for people, with vllm bench serve's
// names: a line per scalar metric that has a text label
// (traces.ResultScalars), then Mean, Median, Std and P-columns per metric,
// E2EL for end-to-end.
func writeResultText(w *strings.Builder, r *traces.Result) {
	for _, m := range traces.ResultScalars() {
		if v, ok := m.TextValue(r); ok {
			fmt.Fprintf(w, "%-36s %s\n", m.Label, v)
		}
	}
	fmt.Fprintln(w)
	writeLatencyTable(w, r, traces.ResultMetrics())
}

// writeLatencyTable prints Mean, Median, Std and a P-column per reported
// percentile (P50 is the Median) for each of metrics (of
// traces.ResultMetrics()).
func writeLatencyTable(w io.Writer, r *traces.Result, metrics []string) error {
	s := &r.Summary
	tw := newTable(w)
	head := "latency (ms)\tMean\tMedian\tStd"
	for _, p := range r.Percentiles {
		if p != 50 {
			head += "\tP" + strings.TrimPrefix(strings.TrimSuffix(traces.PercentileKey(p, ""), "__ms"), "p")
		}
	}
	fmt.Fprintln(tw, head)
	names := map[string]string{"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL", "queue": "queue"}
	for _, m := range metrics {
		d := s.Metric(m)
		line := fmt.Sprintf("%s\t%s\t%s\t%s", names[m], fmtF(d.Mean, 2), fmtF(d.Percentile(50), 2), fmtF(d.Std, 2))
		for _, p := range r.Percentiles {
			if p != 50 {
				line += "\t" + fmtF(d.Percentile(p), 2)
			}
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
