package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sort"

	"github.com/roofsim/roofsim/internal/safefile"
	"go.yaml.in/yaml/v3"
)

// inference-perf releases before April 2026 timed every line of the
// server-sent-event stream, the blank line that ends each event included
// (apis/completion.py: `async for chunk_bytes in response.content` yields
// lines, and output_token_times gets a timestamp per line before the empty
// check). A streamed completion of n tokens is n events and "data: [DONE]",
// 2n + 2 lines, so such a report's time_per_output_token, (last - first
// line) / (lines - 1) (reportgen/base.py), is (E2E - TTFT) / (2n + 1): about
// half the interval between tokens. Its inter_token_latency mixes the token
// intervals with microsecond gaps between each event's two lines. Releases
// from kubernetes-sigs/inference-perf#410 and #452 (April 2026) time content
// events only.
//
// Such a release is recognised by the expanded config it wrote beside its
// reports (results/config.yaml): its load section has no base_seed, which
// every release since February 2026 (#349) writes, defaults included
// (generate_config_report dumps the whole config model).

// ipStreamLines reports whether the inference-perf report in dir comes from a
// release that timed stream lines: dir holds config.yaml and its load section
// lacks base_seed. Without config.yaml the release is unknown: false.
func ipStreamLines(dir string) (bool, error) {
	path := filepath.Join(dir, "config.yaml")
	data, err := safefile.ReadFile(path, safefile.Workload)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var c struct {
		Load map[string]any `yaml:"load"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return false, fmt.Errorf("%s: %v", path, err)
	}
	if c.Load == nil {
		return false, nil
	}
	_, seeded := c.Load["base_seed"]
	return !seeded, nil
}

// streamLinesTPOT is the time_per_output_token in ms a line-timing
// inference-perf release reports for a request of output tokens streamed
// between TTFT and E2E (ms): (E2E - TTFT) / (2 × output + 1); NaN when output
// < 1.
func streamLinesTPOT(ttft, e2e float64, output int) float64 {
	if output < 1 {
		return math.NaN()
	}
	return (e2e - ttft) / float64(2*output+1)
}

// measureAsStreamLines returns sim measured as a line-timing inference-perf
// release measures: per-request TPOT by streamLinesTPOT, and no ITL (that
// release's inter-token latencies are not token intervals). real loses its
// ITL rows too. The stages are re-split by sim's stage bounds.
func measureAsStreamLines(real, sim *Side) (*Side, *Side) {
	r := *real
	r.Overall = withoutITL(real.Overall)
	r.Stages = make([]Summary, len(real.Stages))
	for i := range real.Stages {
		r.Stages[i] = withoutITL(real.Stages[i])
	}
	s := *sim
	s.Requests = make([]Request, len(sim.Requests))
	for i, q := range sim.Requests {
		q.TPOT = streamLinesTPOT(q.TTFT, q.E2E, q.Output)
		q.ITL = nil
		s.Requests[i] = q
	}
	s.Overall = withThroughput(summarize(s.Requests, sim.Overall.Failed), sim.Overall)
	if len(sim.bounds) > 1 && len(sim.Stages) == len(sim.bounds)-1 {
		n := len(sim.bounds) - 1
		byStage := make([][]Request, n)
		for _, q := range s.Requests {
			i := sort.SearchFloat64s(sim.bounds, q.ArrivalS+1e-12) - 1
			if i >= 0 && i < n {
				byStage[i] = append(byStage[i], q)
			}
		}
		s.Stages = make([]Summary, n)
		for i := range s.Stages {
			s.Stages[i] = withThroughput(summarize(byStage[i], sim.Stages[i].Failed), sim.Stages[i])
		}
	}
	return &r, &s
}

// withoutITL returns s with no ITL distribution.
func withoutITL(s Summary) Summary {
	d := make(map[string]Dist, len(s.Dists))
	for k, v := range s.Dists {
		if k != ITL {
			d[k] = v
		}
	}
	s.Dists = d
	return s
}

// withThroughput returns s with the throughputs of orig (re-measuring
// latencies does not change them).
func withThroughput(s, orig Summary) Summary {
	s.RequestThroughput, s.OutputThroughput = orig.RequestThroughput, orig.OutputThroughput
	return withoutITL(s)
}
