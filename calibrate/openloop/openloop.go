// Package openloop identifies engine terms from open-loop serving runs
// recorded by inference-perf (a run directory: profile.yaml, exp-config.yaml
// and results/ with its lifecycle reports), the way the runs were sent: each
// run is simulated from its own config (pipeline.Resolve on profile.yaml),
// set against its measured per-stage figures (package compare), and the
// engine terms that move decode steps are chosen and fitted by leaving one
// model family out at a time.
//
// Only stages the real server sustained enter a fit: no failed request and
// an achieved rate of at least SustainedShare of the stage's requested rate.
// An overloaded stage's latencies measure its queue, which grows with the
// stage's length, not the engine's step costs.
package openloop

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/roofsim/roofsim/compare"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// SustainedShare is the least share of a stage's requested rate the real
// server must have achieved for the stage to count as sustained.
const SustainedShare = 0.9

// Run is one inference-perf run directory: the traffic it sent and what it
// measured.
type Run struct {
	// Name is the directory's base name.
	Name string
	// Dir is the run directory; Config its profile.yaml.
	Dir, Config string
	// Family is the catalog model the run served: the group a
	// leave-one-model-out fit holds out together.
	Family string
	// Spec is the workload as inference-perf sent it.
	Spec *workload.Spec
	// Real is the measured side.
	Real *compare.Side
	// Rates are the requested rate of each stage, requests/s.
	Rates []float64
	// Sustained marks the stages the real server sustained.
	Sustained []bool
}

// RunError is a run directory that could not be read.
type RunError struct {
	Dir string
	Err error
}

func (e *RunError) Error() string { return "openloop: run " + e.Dir + ": " + e.Err.Error() }
func (e *RunError) Unwrap() error { return e.Err }

// LoadRuns reads run directories. A directory holding no profile.yaml but
// run directories below it (such as e2e/open_loop_vllm_h100) stands for
// all of them, in name order.
func LoadRuns(dirs []string) ([]*Run, error) {
	var out []*Run
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "profile.yaml")); err != nil {
			subs, gerr := filepath.Glob(filepath.Join(d, "*", "profile.yaml"))
			if gerr != nil || len(subs) == 0 {
				return nil, &RunError{Dir: d, Err: fmt.Errorf("no profile.yaml in it or in its subdirectories")}
			}
			slices.Sort(subs)
			for _, s := range subs {
				r, err := loadRun(filepath.Dir(s))
				if err != nil {
					return nil, err
				}
				out = append(out, r)
			}
			continue
		}
		r, err := loadRun(d)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, &RunError{Dir: strings.Join(dirs, ","), Err: fmt.Errorf("no runs given")}
	}
	return out, nil
}

func loadRun(dir string) (*Run, error) {
	cfg := filepath.Join(dir, "profile.yaml")
	spec, err := workload.Load(cfg)
	if err != nil {
		return nil, &RunError{Dir: dir, Err: err}
	}
	m, err := model.Resolve(spec.Model)
	if err != nil {
		return nil, &RunError{Dir: dir, Err: err}
	}
	real, err := compare.Load(filepath.Join(dir, "results"))
	if err != nil {
		return nil, &RunError{Dir: dir, Err: err}
	}
	r := &Run{Name: filepath.Base(dir), Dir: dir, Config: cfg, Family: m.Name, Spec: spec, Real: real}
	for _, c := range spec.Clients {
		if c.Arrival != nil && len(c.Arrival.Stages) > 0 {
			for _, st := range c.Arrival.Stages {
				r.Rates = append(r.Rates, st.Rate)
			}
			break
		}
	}
	if len(r.Rates) == 0 || len(r.Rates) != len(real.Stages) {
		return nil, &RunError{Dir: dir, Err: fmt.Errorf("%d load stages in profile.yaml against %d stage reports in results/", len(r.Rates), len(real.Stages))}
	}
	for i, s := range real.Stages {
		r.Sustained = append(r.Sustained, s.Failed == 0 && s.RequestThroughput >= SustainedShare*r.Rates[i])
	}
	return r, nil
}

// StageFigures are one stage's medians, real against simulated, in ms, as
// package compare measures them (a line-timing inference-perf release's
// TPOT convention applied to both sides).
type StageFigures struct {
	Stage                       int
	Sustained                   bool
	RealTPOT, SimTPOT           float64
	RealTTFT, SimTTFT           float64
	RealE2E, SimE2E             float64
	RealRate, SimRate, WantRate float64
}

// MarshalJSON writes the figures with snake_case keys, a figure that is
// not a number (a stage not simulated, a metric not reported) as null.
func (f StageFigures) MarshalJSON() ([]byte, error) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Stage     int      `json:"stage"`
		Sustained bool     `json:"sustained"`
		RealTPOT  *float64 `json:"real_tpot_ms"`
		SimTPOT   *float64 `json:"sim_tpot_ms"`
		RealTTFT  *float64 `json:"real_ttft_ms"`
		SimTTFT   *float64 `json:"sim_ttft_ms"`
		RealE2E   *float64 `json:"real_e2e_ms"`
		SimE2E    *float64 `json:"sim_e2e_ms"`
		RealRate  *float64 `json:"real_rate_per_s"`
		SimRate   *float64 `json:"sim_rate_per_s"`
		WantRate  *float64 `json:"want_rate_per_s"`
	}{f.Stage, f.Sustained, num(f.RealTPOT), num(f.SimTPOT), num(f.RealTTFT), num(f.SimTTFT),
		num(f.RealE2E), num(f.SimE2E), num(f.RealRate), num(f.SimRate), num(f.WantRate)})
}

// Simulate runs r's traffic on g (whose profile prices the steps) and
// returns each stage's figures.
func Simulate(ctx context.Context, r *Run, g *hardware.GPU) ([]StageFigures, error) {
	plan, err := pipeline.Resolve(r.Spec, pipeline.Options{GPU: g, Workload: r.Config})
	if err != nil {
		return nil, &RunError{Dir: r.Dir, Err: err}
	}
	src, err := plan.Source()
	if err != nil {
		return nil, &RunError{Dir: r.Dir, Err: err}
	}
	sink := &recordSink{}
	if _, err := plan.Run(ctx, src, sink, pipeline.RunOptions{}); err != nil {
		return nil, &RunError{Dir: r.Dir, Err: err}
	}
	rep := compare.Compare(r.Real, compare.FromRecords(sink.recs, r.Spec))
	stat := map[string]compare.Row{}
	for _, row := range rep.Rows {
		stat[row.Scope+"|"+row.Metric+"|"+row.Stat] = row
	}
	var out []StageFigures
	for i := range r.Rates {
		get := func(metric, st string) (float64, float64) {
			row, ok := stat[fmt.Sprintf("stage %d|%s|%s", i, metric, st)]
			if !ok {
				return math.NaN(), math.NaN()
			}
			return row.Real, row.Sim
		}
		f := StageFigures{Stage: i, Sustained: r.Sustained[i], WantRate: r.Rates[i]}
		f.RealTPOT, f.SimTPOT = get(compare.TPOT, "p50")
		f.RealTTFT, f.SimTTFT = get(compare.TTFT, "p50")
		f.RealE2E, f.SimE2E = get(compare.E2E, "p50")
		f.RealRate, f.SimRate = get("throughput", "req/s")
		out = append(out, f)
	}
	return out, nil
}

// recordSink keeps the request records of a run.
type recordSink struct{ recs []traces.RequestRecord }

func (s *recordSink) Request(r *traces.RequestRecord) error {
	s.recs = append(s.recs, *r)
	return nil
}

func (s *recordSink) Step(*traces.StepRecord) error { return nil }
