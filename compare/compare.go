package compare

import (
	"fmt"
	"math"
	"slices"
)

// Row is one statistic of one metric in one scope, real against
// simulated. ErrPct is the simulation's signed error, (sim - real) / real
// in percent; NaN when either side lacks the statistic.
type Row struct {
	Scope  string  `json:"scope"` // "all" or "stage N"
	Metric string  `json:"metric"`
	Stat   string  `json:"stat"` // mean, p50, p90, p99, req/s, output tok/s
	Real   float64 `json:"real"`
	Sim    float64 `json:"sim"`
	ErrPct float64 `json:"error_pct"`
}

// Matched summarizes requests matched one to one by id: per metric, the
// median signed and the median absolute percentage error over the pairs.
type Matched struct {
	Pairs      int                `json:"pairs"`
	MedianErr  map[string]float64 `json:"median_error_pct"`
	MedianAPE  map[string]float64 `json:"median_ape_pct"`
	OnlyInReal int                `json:"only_in_real"`
	OnlyInSim  int                `json:"only_in_sim"`
}

// Report is a comparison.
type Report struct {
	Real, Sim *Side
	// Matching says how requests were put side by side: "request id" or
	// "distribution".
	Matching string
	Rows     []Row
	// Matched is set when Matching is "request id".
	Matched  *Matched
	Warnings []string
}

func errPct(real, sim float64) float64 {
	if math.IsNaN(real) || math.IsNaN(sim) || real == 0 {
		return math.NaN()
	}
	return (sim - real) / real * 100
}

// rows compares two summaries in one scope.
func rows(scope string, r, s *Summary) []Row {
	var out []Row
	for _, m := range Metrics() {
		rd, sd := r.dist(m), s.dist(m)
		if isMissing(rd) && isMissing(sd) {
			continue
		}
		for _, st := range []struct {
			name string
			a, b float64
		}{{"mean", rd.Mean, sd.Mean}, {"p50", rd.P50, sd.P50}, {"p90", rd.P90, sd.P90}, {"p99", rd.P99, sd.P99}} {
			out = append(out, Row{Scope: scope, Metric: m, Stat: st.name, Real: st.a, Sim: st.b, ErrPct: errPct(st.a, st.b)})
		}
	}
	out = append(out,
		Row{Scope: scope, Metric: "throughput", Stat: "req/s", Real: r.RequestThroughput, Sim: s.RequestThroughput, ErrPct: errPct(r.RequestThroughput, s.RequestThroughput)},
		Row{Scope: scope, Metric: "throughput", Stat: "output tok/s", Real: r.OutputThroughput, Sim: s.OutputThroughput, ErrPct: errPct(r.OutputThroughput, s.OutputThroughput)})
	return out
}

func isMissing(d Dist) bool {
	return math.IsNaN(d.Mean) && math.IsNaN(d.P50) && math.IsNaN(d.P90) && math.IsNaN(d.P99)
}

// Compare sets sim against real: overall rows, per-stage rows when both
// sides have the same number of stages, and a one-to-one match by request
// id when both sides carry ids.
func Compare(real, sim *Side) *Report {
	rep := &Report{Real: real, Sim: sim, Matching: "distribution"}
	if real.StreamLines && len(sim.Requests) > 0 {
		real, sim = measureAsStreamLines(real, sim)
		rep.Warnings = append(rep.Warnings, "the real side's inference-perf release timed every line of the event stream (its config.yaml has no load.base_seed): its TPOT is (E2E - TTFT) / (2 x output tokens + 1), about half the token interval, and the simulated TPOT is measured the same way; its ITL mixes token intervals with microsecond gaps between lines and is not compared")
	}
	rep.Rows = rows("all", &real.Overall, &sim.Overall)
	switch {
	case len(real.Stages) > 0 && len(real.Stages) == len(sim.Stages):
		for i := range real.Stages {
			rep.Rows = append(rep.Rows, rows(fmt.Sprintf("stage %d", i), &real.Stages[i], &sim.Stages[i])...)
		}
	case len(real.Stages) > 0 || len(sim.Stages) > 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("stages not compared: the real side has %d, the simulated side %d", len(real.Stages), len(sim.Stages)))
	}
	if real.HasIDs && sim.HasIDs {
		rep.Matched = match(real.Requests, sim.Requests)
		if why := workloadMismatch(real, sim); why != "" {
			rep.Matched = nil
			rep.Warnings = append(rep.Warnings, "request ids not matched: "+why+"; compared by distribution")
		} else if rep.Matched.Pairs > 0 {
			rep.Matching = "request id"
		} else {
			rep.Matched = nil
			rep.Warnings = append(rep.Warnings, "no request ids in common: compared by distribution")
		}
	}
	return rep
}

// workloadMismatch says why the two sides cannot be matched by request id
// ("" when they can): ids are positions in a workload's request stream, so
// they name the same request only when both sides ran the same workload with
// the same seed. It is so when both sides record different seeds, or when
// most requests with the same id differ in prompt length (by more than 5%
// and 2 tokens).
func workloadMismatch(real, sim *Side) string {
	if real.Seed != nil && sim.Seed != nil && *real.Seed != *sim.Seed {
		return fmt.Sprintf("the sides ran different workloads (seed %d on the real side, %d on the simulated side)", *real.Seed, *sim.Seed)
	}
	prompt := make(map[uint64]int, len(sim.Requests))
	for i := range sim.Requests {
		prompt[sim.Requests[i].ID] = sim.Requests[i].Prompt
	}
	pairs, differ := 0, 0
	for i := range real.Requests {
		r := &real.Requests[i]
		s, ok := prompt[r.ID]
		if !ok || r.Prompt <= 0 || s <= 0 {
			continue
		}
		pairs++
		if d := math.Abs(float64(r.Prompt - s)); d > 2 && d > 0.05*float64(max(r.Prompt, s)) {
			differ++
		}
	}
	if pairs > 0 && 2*differ > pairs {
		return fmt.Sprintf("the sides ran different workloads (%d of %d requests with the same id differ in prompt length)", differ, pairs)
	}
	return ""
}

// match pairs requests by id.
func match(real, sim []Request) *Matched {
	byID := make(map[uint64]*Request, len(sim))
	for i := range sim {
		byID[sim[i].ID] = &sim[i]
	}
	m := &Matched{MedianErr: map[string]float64{}, MedianAPE: map[string]float64{}}
	errs := map[string][]float64{}
	seen := map[uint64]bool{}
	for i := range real {
		r := &real[i]
		s, ok := byID[r.ID]
		if !ok {
			m.OnlyInReal++
			continue
		}
		seen[r.ID] = true
		m.Pairs++
		for _, p := range []struct {
			name string
			a, b float64
		}{{TTFT, r.TTFT, s.TTFT}, {TPOT, r.TPOT, s.TPOT}, {E2E, r.E2E, s.E2E}} {
			if e := errPct(p.a, p.b); !math.IsNaN(e) {
				errs[p.name] = append(errs[p.name], e)
			}
		}
	}
	m.OnlyInSim = len(sim) - len(seen)
	for k, v := range errs {
		slices.Sort(v)
		m.MedianErr[k] = quantile(v, 0.5)
		abs := make([]float64, len(v))
		for i, x := range v {
			abs[i] = math.Abs(x)
		}
		slices.Sort(abs)
		m.MedianAPE[k] = quantile(abs, 0.5)
	}
	return m
}
