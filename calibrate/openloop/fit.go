package openloop

import (
	"context"
	"fmt"
	"github.com/roofsim/roofsim/calibrate"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/roofsim/roofsim/hardware"
)

// Term is one engine term an open-loop fit can move, with the grid its
// response is simulated on.
type Term struct {
	// Key is the profile's YAML key.
	Key string
	// Mechanism says what the term stands for and what it scales with.
	Mechanism string
	// Grid are the values simulated; a fit moves the term within
	// [min, max] of them, interpolating the simulated response.
	Grid []float64
	// Off is the value that means "no such cost".
	Off float64
	Get func(*hardware.Profile) float64
	Set func(*hardware.Profile, float64)
}

// Terms are the decode-side engine terms the open-loop runs can identify:
// each moves the time of a decode step, which the stages' TPOT measures.
func Terms() []Term {
	return []Term{
		{Key: "per_request_kv_head_us", Mechanism: "per (request, KV head on the GPU, attention layer): per-sequence attention work beyond the isolated kernel; grows with the KV heads each GPU serves",
			Grid: []float64{0, 0.1, 0.2, 0.3},
			Get:  func(p *hardware.Profile) float64 { return p.PerRequestKVHeadUS },
			Set:  func(p *hardware.Profile, v float64) { p.PerRequestKVHeadUS = v }},
		{Key: "per_request_overhead_us", Mechanism: "per request in a step, whatever the model's shape (input preparation, sampling)",
			Grid: []float64{0, 25, 50, 100},
			Get:  func(p *hardware.Profile) float64 { return p.PerRequestOverheadUS },
			Set:  func(p *hardware.Profile, v float64) { p.PerRequestOverheadUS = v }},
		{Key: "serving_allreduce_efficiency", Mechanism: "share of the collective benchmark's all-reduce rate a serving step sustains; moves only steps with tensor parallelism, by their all-reduce time",
			Grid: []float64{1, 0.8, 0.6, 0.45}, Off: 1,
			Get: func(p *hardware.Profile) float64 {
				if p.ServingAllReduceEfficiency == 0 {
					return 1
				}
				return p.ServingAllReduceEfficiency
			},
			Set: func(p *hardware.Profile, v float64) { p.ServingAllReduceEfficiency = v }},
	}
}

// Candidate is one choice of which terms exist: Free terms are fitted,
// the others take their Off value, except that Shipped keeps the profile's
// values of every term.
type Candidate struct {
	Name    string
	Free    []string
	Shipped bool
}

// Candidates are the term sets a fit chooses among by cross-validation.
func Candidates() []Candidate {
	return []Candidate{
		{Name: "shipped profile", Shipped: true},
		{Name: "none"},
		{Name: "per (request, KV head, layer)", Free: []string{"per_request_kv_head_us"}},
		{Name: "per request", Free: []string{"per_request_overhead_us"}},
		{Name: "all-reduce share", Free: []string{"serving_allreduce_efficiency"}},
		{Name: "per (request, KV head, layer) + all-reduce share", Free: []string{"per_request_kv_head_us", "serving_allreduce_efficiency"}},
		{Name: "per request + all-reduce share", Free: []string{"per_request_overhead_us", "serving_allreduce_efficiency"}},
	}
}

// Errors are the signed percentage errors (sim - real) / real of the
// sustained stages' medians.
type Errors struct {
	Stages int `json:"stages"`
	// TPOT, TTFT and E2E are the median absolute errors, percent.
	TPOT float64 `json:"tpot_median_abs_pct"`
	TTFT float64 `json:"ttft_median_abs_pct"`
	E2E  float64 `json:"e2e_median_abs_pct"`
	// TPOTBias is the median signed TPOT error, percent.
	TPOTBias float64 `json:"tpot_bias_pct"`
}

// CandidateResult is one candidate's fit on all families and its
// leave-one-model-out error.
type CandidateResult struct {
	Name string `json:"name"`
	// Values are the terms fitted on every family.
	Values map[string]float64 `json:"values"`
	Fitted Errors             `json:"fitted"`
	// CrossValidated are the errors of each family's stages predicted by
	// the candidate fitted on the other families, pooled.
	CrossValidated Errors `json:"cross_validated"`
	// FoldValues are the terms each fold fitted, by held-out family.
	FoldValues map[string]map[string]float64 `json:"fold_values"`
	// BeatShare is the share of paired bootstrap resamples of the held-out
	// stages in which the candidate beat the choice made before it
	// (beatShare); the first candidate has none.
	BeatShare float64 `json:"beat_share,omitempty"`
}

// StageResult is one stage of one run under the chosen candidate's fit.
type StageResult struct {
	Run    string       `json:"run"`
	Family string       `json:"family"`
	Fig    StageFigures `json:"figures"`
	// HeldOut are the stage's figures simulated with the terms fitted
	// without the run's family (Sim* NaN for a stage not sustained).
	HeldOut StageFigures `json:"held_out"`
}

// Result is an open-loop identification.
type Result struct {
	GPU        string            `json:"gpu"`
	Runs       []string          `json:"runs"`
	Families   []string          `json:"families"`
	Candidates []CandidateResult `json:"candidates"`
	// Chosen is the candidate with the lowest cross-validated TPOT error
	// among those that beat every earlier choice significantly: taken in
	// order, a candidate replaces the choice only when its error is lower
	// by more than 0.1 points and it wins at least calibrate.SelectionLevel of the
	// paired bootstrap resamples of the held-out stages (BeatShare).
	Chosen string `json:"chosen"`
	// Values are the chosen candidate's terms fitted on every family.
	Values map[string]float64 `json:"values"`
	Stages []StageResult      `json:"stages"`
}

// Options tunes a fit.
type Options struct {
	// Workers bounds the runs simulated at once (0: GOMAXPROCS).
	Workers int
	// OnProgress, when set, is told the count of simulations of every run
	// (grid points and fold checks) after each one.
	OnProgress func(done int)
	// Candidates are the term sets to choose among (nil: Candidates()).
	Candidates []Candidate
}

// fitter holds the runs and the cache of simulated grid points.
type fitter struct {
	ctx   context.Context
	gpu   *hardware.GPU
	base  *hardware.Profile
	runs  []*Run
	terms []Term
	opts  Options
	cache map[string][][]StageFigures
	done  int
}

// Fit identifies g's decode engine terms from runs: every candidate is
// fitted on all model families and on each leave-one-family-out split, and
// the candidate whose held-out families come out best is chosen.
func Fit(ctx context.Context, g *hardware.GPU, runs []*Run, opts Options) (*Result, error) {
	f := &fitter{ctx: ctx, gpu: g, base: g.EffectiveProfile(), runs: runs, terms: Terms(), opts: opts, cache: map[string][][]StageFigures{}}
	fams := families(runs)
	if len(fams) < 2 {
		return nil, fmt.Errorf("openloop: runs of %d model famil(ies); leaving one model out needs at least 2", len(fams))
	}
	res := &Result{GPU: g.Name, Families: fams}
	for _, r := range runs {
		res.Runs = append(res.Runs, r.Name)
	}
	best := -1
	var bestStages []StageResult
	cands := opts.Candidates
	if cands == nil {
		cands = Candidates()
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("openloop: no candidate term set to choose among")
	}
	for _, c := range cands {
		cr, stages, err := f.candidate(c, fams)
		if err != nil {
			return nil, err
		}
		if best >= 0 {
			cr.BeatShare = beatShare(heldOutAPE(stages), heldOutAPE(bestStages))
		}
		res.Candidates = append(res.Candidates, *cr)
		if best < 0 || replaces(*cr, res.Candidates[best]) {
			best, bestStages = len(res.Candidates)-1, stages
		}
	}
	res.Chosen, res.Values, res.Stages = res.Candidates[best].Name, res.Candidates[best].Values, bestStages
	return res, nil
}

func families(runs []*Run) []string {
	var out []string
	for _, r := range runs {
		if !slices.Contains(out, r.Family) {
			out = append(out, r.Family)
		}
	}
	slices.Sort(out)
	return out
}

// values returns candidate c's term values at free-term coordinates x.
func (f *fitter) values(c Candidate, x []float64) []float64 {
	v := make([]float64, len(f.terms))
	for i, t := range f.terms {
		v[i] = t.Off
		if c.Shipped {
			v[i] = t.Get(f.base)
		}
		if j := slices.Index(c.Free, t.Key); j >= 0 {
			v[i] = x[j]
		}
	}
	return v
}

func key(v []float64) string {
	var b strings.Builder
	for _, x := range v {
		b.WriteString(strconv.FormatFloat(x, 'g', 12, 64))
		b.WriteByte(',')
	}
	return b.String()
}

// simulate returns every run's stage figures with the terms at v (cached).
func (f *fitter) simulate(v []float64, only func(*Run) bool) ([][]StageFigures, error) {
	k := key(v)
	if got, ok := f.cache[k]; ok {
		return got, nil
	}
	prof := f.base.Clone()
	for i, t := range f.terms {
		t.Set(prof, v[i])
	}
	g := f.gpu.Clone()
	g.Profile = prof
	out := make([][]StageFigures, len(f.runs))
	errs := make([]error, len(f.runs))
	workers := f.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, r := range f.runs {
		if only != nil && !only(r) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = Simulate(f.ctx, r, g)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if only == nil {
		f.cache[k] = out
	}
	f.done++
	if f.opts.OnProgress != nil {
		f.opts.OnProgress(f.done)
	}
	return out, nil
}

// grid returns the free terms' grids of c.
func (f *fitter) grid(c Candidate) [][]float64 {
	var g [][]float64
	for _, k := range c.Free {
		for _, t := range f.terms {
			if t.Key == k {
				g = append(g, slices.Sorted(slices.Values(t.Grid)))
			}
		}
	}
	return g
}

// surface is the simulated log TPOT error of every sustained stage at each
// point of a candidate's grid.
type surface struct {
	grid [][]float64
	// at[p][i][s] is run i's stage s log error at flat grid point p.
	at [][][]float64
}

func (f *fitter) surface(c Candidate) (*surface, error) {
	s := &surface{grid: f.grid(c)}
	n := 1
	for _, g := range s.grid {
		n *= len(g)
	}
	for p := range n {
		x := s.point(p)
		figs, err := f.simulate(f.values(c, x), nil)
		if err != nil {
			return nil, err
		}
		lay := make([][]float64, len(f.runs))
		for i, fs := range figs {
			lay[i] = make([]float64, len(fs))
			for j, fg := range fs {
				lay[i][j] = math.Log(fg.SimTPOT / fg.RealTPOT)
			}
		}
		s.at = append(s.at, lay)
	}
	return s, nil
}

// point is flat grid index p's coordinates (the first term varies slowest).
func (s *surface) point(p int) []float64 {
	x := make([]float64, len(s.grid))
	for d := len(s.grid) - 1; d >= 0; d-- {
		x[d] = s.grid[d][p%len(s.grid[d])]
		p /= len(s.grid[d])
	}
	return x
}

// interp is run i's stage j log error at x, multilinear between grid
// points (x is clamped to the grid).
func (s *surface) interp(x []float64, i, j int) float64 {
	if len(s.grid) == 0 {
		return s.at[0][i][j]
	}
	// Per dimension: the lower cell index and the weight of the upper one.
	lo := make([]int, len(s.grid))
	w := make([]float64, len(s.grid))
	for d, g := range s.grid {
		v := min(max(x[d], g[0]), g[len(g)-1])
		k := 0
		for k < len(g)-2 && v > g[k+1] {
			k++
		}
		lo[d] = k
		if len(g) > 1 {
			w[d] = (v - g[k]) / (g[k+1] - g[k])
		}
	}
	total := 0.0
	for corner := range 1 << len(s.grid) {
		p, wt := 0, 1.0
		for d, g := range s.grid {
			idx := lo[d]
			if corner>>d&1 == 1 {
				idx = min(idx+1, len(g)-1)
				wt *= w[d]
			} else {
				wt *= 1 - w[d]
			}
			p = p*len(g) + idx
		}
		if wt != 0 {
			total += wt * s.at[p][i][j]
		}
	}
	return total
}

// loss is the mean over the families in train of each family's mean
// squared log TPOT error of its sustained stages, at x.
func (f *fitter) loss(s *surface, x []float64, train func(string) bool) float64 {
	sum, fams := map[string]float64{}, map[string]int{}
	for i, r := range f.runs {
		if !train(r.Family) {
			continue
		}
		for j, ok := range r.Sustained {
			if !ok {
				continue
			}
			e := s.interp(x, i, j)
			if math.IsNaN(e) || math.IsInf(e, 0) {
				continue
			}
			sum[r.Family] += e * e
			fams[r.Family]++
		}
	}
	total := 0.0
	for k, n := range fams {
		total += sum[k] / float64(n)
	}
	return total / float64(max(len(fams), 1))
}

// minimise searches the surface on a fine lattice (65 points per free
// term between its grid's ends).
func (f *fitter) minimise(s *surface, train func(string) bool) []float64 {
	const steps = 64
	best, bestLoss := []float64(nil), math.Inf(1)
	n := 1
	for range s.grid {
		n *= steps + 1
	}
	for p := range n {
		x := make([]float64, len(s.grid))
		q := p
		for d := len(s.grid) - 1; d >= 0; d-- {
			g := s.grid[d]
			x[d] = g[0] + (g[len(g)-1]-g[0])*float64(q%(steps+1))/steps
			q /= steps + 1
		}
		if l := f.loss(s, x, train); l < bestLoss {
			best, bestLoss = x, l
		}
	}
	return best
}

// candidate fits c on every family and on each leave-one-family-out
// split, and measures both by direct simulation.
func (f *fitter) candidate(c Candidate, fams []string) (*CandidateResult, []StageResult, error) {
	s, err := f.surface(c)
	if err != nil {
		return nil, nil, err
	}
	cr := &CandidateResult{Name: c.Name, FoldValues: map[string]map[string]float64{}}
	all := f.minimise(s, func(string) bool { return true })
	cr.Values = f.named(c, all)
	figs, err := f.simulate(f.values(c, all), nil)
	if err != nil {
		return nil, nil, err
	}
	var fitted, held []StageFigures
	held2 := map[[2]int]StageFigures{}
	for i, r := range f.runs {
		for j, fg := range figs[i] {
			if r.Sustained[j] {
				fitted = append(fitted, fg)
			}
		}
	}
	for _, fam := range fams {
		x := f.minimise(s, func(k string) bool { return k != fam })
		cr.FoldValues[fam] = f.named(c, x)
		hf, err := f.simulate(f.values(c, x), func(r *Run) bool { return r.Family == fam })
		if err != nil {
			return nil, nil, err
		}
		for i, r := range f.runs {
			if r.Family != fam {
				continue
			}
			for j, fg := range hf[i] {
				if r.Sustained[j] {
					held = append(held, fg)
					held2[[2]int{i, j}] = fg
				}
			}
		}
	}
	cr.Fitted, cr.CrossValidated = summarise(fitted), summarise(held)
	var stages []StageResult
	for i, r := range f.runs {
		for j, fg := range figs[i] {
			h, ok := held2[[2]int{i, j}]
			if !ok {
				h = fg
				h.SimTPOT, h.SimTTFT, h.SimE2E, h.SimRate = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			}
			stages = append(stages, StageResult{Run: r.Name, Family: r.Family, Fig: fg, HeldOut: h})
		}
	}
	return cr, stages, nil
}

// named maps c's free coordinates x to term keys (all terms, fixed ones
// at their value).
func (f *fitter) named(c Candidate, x []float64) map[string]float64 {
	v := f.values(c, x)
	out := map[string]float64{}
	for i, t := range f.terms {
		out[t.Key] = v[i]
	}
	return out
}

func pct(sim, real float64) float64 { return (sim - real) / real * 100 }

func summarise(ps []StageFigures) Errors {
	var tp, tt, e2, bias []float64
	for _, p := range ps {
		tp = append(tp, math.Abs(pct(p.SimTPOT, p.RealTPOT)))
		bias = append(bias, pct(p.SimTPOT, p.RealTPOT))
		tt = append(tt, math.Abs(pct(p.SimTTFT, p.RealTTFT)))
		e2 = append(e2, math.Abs(pct(p.SimE2E, p.RealE2E)))
	}
	return Errors{Stages: len(ps), TPOT: calibrate.MidMedian(tp), TTFT: calibrate.MidMedian(tt), E2E: calibrate.MidMedian(e2), TPOTBias: calibrate.MidMedian(bias)}
}
