package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/roofsim/roofsim/compare"
	"github.com/spf13/cobra"
)

type compareOptions struct {
	Real, Sim string
	Out       string
	Plot      string
	JSON      bool
}

func newCompareCmd(s streams, runF func(*cobra.Command, *compareOptions) error) *cobra.Command {
	opts := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare --real DIR|FILE --sim DIR [--out report.md|report.html] [--plot cdf.svg]",
		Short: "Compare a real serving run with a simulated one, metric by metric",
		Long: `Set a real run against a simulated one: TTFT, TPOT, ITL, E2E and queue time
(mean, p50, p90, p99) and throughput, real and simulated, with the
simulation's signed error (sim - real) / real, overall and per load stage.

--real takes a directory written by 'sim observe --out', an inference-perf
report directory (summary_lifecycle_metrics.json and its
stage_N_lifecycle_metrics.json files) or one of its JSON files, or a
'vllm bench serve' result JSON. --sim takes a 'sim run --out' directory.
Requests are matched one to one by id where both sides have ids (an observe
and a run directory of the same workload and seed), by distribution
otherwise. Sides that ran different workloads (run.json seeds differ, or
most requests of the same id differ in prompt length) are compared by
distribution only, with a warning.

The report is Markdown on stdout, or written to --out (.md or .html);
--plot draws CDF overlays (.svg or .png).`,
		Example: `  sim compare --real observed/chat --sim simulated/chat
  sim compare --real reports/inference-perf --sim sim-out --out report.html --plot cdf.svg
  sim compare --real vllm-bench-result.json --sim sim-out --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return runCompare(s, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Real, "real", "", "real side: observe directory, inference-perf report, or vllm bench serve JSON")
	f.StringVar(&opts.Sim, "sim", "", "simulated side: a 'sim run --out' directory")
	f.StringVar(&opts.Out, "out", "", "write the report here (.md or .html) instead of stdout")
	f.StringVar(&opts.Plot, "plot", "", "write CDF overlays here (.svg or .png)")
	f.BoolVar(&opts.JSON, "json", false, "print the rows as JSON")
	return cmd
}

func runCompare(s streams, opts *compareOptions) error {
	if opts.Real == "" || opts.Sim == "" {
		return usageError{errors.New("--real and --sim: both required")}
	}
	var html bool
	if opts.Out != "" {
		switch strings.ToLower(filepath.Ext(opts.Out)) {
		case ".md", ".markdown":
		case ".html", ".htm":
			html = true
		default:
			return usageError{fmt.Errorf("--out: want a .md or .html file, got %q", opts.Out)}
		}
	}
	if opts.Plot != "" {
		if ext := strings.ToLower(filepath.Ext(opts.Plot)); ext != ".svg" && ext != ".png" {
			return usageError{fmt.Errorf("--plot: want a .svg or .png file, got %q", opts.Plot)}
		}
	}
	real, err := compare.Load(opts.Real)
	if err != nil {
		return fmt.Errorf("--real: %w", err)
	}
	sim, err := compare.Load(opts.Sim)
	if err != nil {
		return fmt.Errorf("--sim: %w", err)
	}
	rep := compare.Compare(real, sim)
	if opts.Plot != "" {
		if err := rep.WritePlot(opts.Plot); err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
	}
	if opts.JSON {
		return writeJSON(s.out, map[string]any{"real": real.Path, "sim": sim.Path, "matching": rep.Matching,
			"matched": rep.Matched, "rows": jsonRows(rep.Rows), "warnings": rep.Warnings})
	}
	var buf bytes.Buffer
	if html {
		link := ""
		if opts.Plot != "" {
			if rel, err := filepath.Rel(filepath.Dir(opts.Out), opts.Plot); err == nil {
				link = filepath.ToSlash(rel)
			}
		}
		err = rep.WriteHTML(&buf, link)
	} else {
		err = rep.WriteMarkdown(&buf)
	}
	if err != nil {
		return err
	}
	if opts.Out == "" {
		_, err = s.out.Write(buf.Bytes())
		return err
	}
	if err := atomicWriteBytes(opts.Out, buf.Bytes()); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	fmt.Fprintf(s.out, "wrote %s\n", opts.Out)
	return nil
}

// jsonRows replaces NaN (not JSON) by null.
func jsonRows(rows []compare.Row) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		m := map[string]any{"scope": r.Scope, "metric": r.Metric, "stat": r.Stat}
		for k, v := range map[string]float64{"real": r.Real, "sim": r.Sim, "error_pct": r.ErrPct} {
			if v != v {
				m[k] = nil
			} else {
				m[k] = v
			}
		}
		out[i] = m
	}
	return out
}
