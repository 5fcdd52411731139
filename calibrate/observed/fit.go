package observed

import (
	"errors"
	"fmt"
	"github.com/roofsim/roofsim/calibrate"
	"math"
	"slices"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
	"gonum.org/v1/gonum/mat"
)

// Options tunes Fit.
type Options struct {
	// Terms restricts the fit to these keys of Terms() (nil: all of them).
	Terms []string
	// MaxEvals bounds the loss evaluations of one fit (default 600); each
	// evaluation simulates every run once.
	MaxEvals int
}

// TermResult is one engine term after the fit.
type TermResult struct {
	Key   string  `json:"key"`
	Cause string  `json:"cause"`
	Start float64 `json:"start"`
	Value float64 `json:"value"`
	// Fitted is false for a term held at its start: it does not move the
	// predictions of these runs, or moves them the way an earlier term does.
	Fitted bool   `json:"fitted"`
	Note   string `json:"note,omitempty"`
}

// RunError compares one run's observed latencies with the simulation's.
// Medians are over the run's completed requests, errors signed
// ((simulated - observed) / observed, %); APE is the median over requests
// of each request's absolute percentage error.
type RunError struct {
	Run        string  `json:"run"`
	Requests   int     `json:"requests"`
	TTFTObsMs  float64 `json:"ttft_p50_observed_ms"`
	TTFTSimMs  float64 `json:"ttft_p50_simulated_ms"`
	TTFTErrPct float64 `json:"ttft_p50_error_pct"`
	TPOTObsMs  float64 `json:"tpot_p50_observed_ms"`
	TPOTSimMs  float64 `json:"tpot_p50_simulated_ms"`
	TPOTErrPct float64 `json:"tpot_p50_error_pct"`
	TTFTAPEPct float64 `json:"ttft_median_ape_pct"`
	TPOTAPEPct float64 `json:"tpot_median_ape_pct"`
}

// Result is a fitted profile with its diagnostics.
type Result struct {
	// Profile is the starting profile with the fitted engine terms; its
	// kernel efficiencies are the starting profile's, unchanged.
	Profile *hardware.Profile
	Terms   []TermResult
	// InSample compares every run with the fit made on all of them.
	InSample []RunError
	// HeldOut has, for each run, its errors under a fit made on the other
	// runs (leave one run out); nil with a single run.
	HeldOut  []RunError
	Loss     float64
	Evals    int
	Warnings []string
}

// prepared is a run ready to replay.
type prepared struct {
	run   *Run
	model *model.Config
}

// problem is a fit over a set of runs.
type problem struct {
	gpu   *hardware.GPU
	base  *hardware.Profile
	runs  []prepared
	terms []Term
	evals int
}

// Fit fits the engine terms of gpu's profile (hardware.GPU.EffectiveProfile)
// to runs. Every run is simulated on gpu with its own deployment; the
// runs' deployments may differ (TP, model, engine knobs) but describe the
// same GPU type and engine. It needs at least one run with completed
// requests; with two or more it also reports the leave-one-run-out error.
func Fit(gpu *hardware.GPU, runs []*Run, opts Options) (*Result, error) {
	if gpu == nil {
		return nil, errors.New("gpu: required")
	}
	if len(runs) == 0 {
		return nil, errors.New("observed: at least one run is required")
	}
	if opts.MaxEvals == 0 {
		opts.MaxEvals = 600
	}
	terms, err := selectTerms(opts.Terms)
	if err != nil {
		return nil, err
	}
	pr := &problem{gpu: gpu, base: gpu.EffectiveProfile().Clone(), terms: terms}
	for _, r := range runs {
		if len(r.Requests) == 0 {
			return nil, fmt.Errorf("run %q: no completed requests", r.Name)
		}
		m, err := model.Resolve(r.Deployment.Model)
		if err != nil {
			return nil, fmt.Errorf("run %q: model: %w", r.Name, err)
		}
		pr.runs = append(pr.runs, prepared{run: r, model: m})
	}
	res := &Result{}
	prof, termRes, loss, err := pr.fit(opts.MaxEvals, &res.Warnings)
	if err != nil {
		return nil, err
	}
	res.Profile, res.Terms, res.Loss, res.Evals = prof, termRes, loss, pr.evals
	for i := range pr.runs {
		e, err := pr.compare(prof, &pr.runs[i])
		if err != nil {
			return nil, err
		}
		res.InSample = append(res.InSample, e)
	}
	if len(pr.runs) >= 2 {
		for i := range pr.runs {
			sub := &problem{gpu: gpu, base: pr.base, terms: terms}
			for j := range pr.runs {
				if j != i {
					sub.runs = append(sub.runs, pr.runs[j])
				}
			}
			var ignore []string
			p, _, _, err := sub.fit(opts.MaxEvals, &ignore)
			if err != nil {
				return nil, fmt.Errorf("leaving out %q: %w", pr.runs[i].run.Name, err)
			}
			e, err := pr.compare(p, &pr.runs[i])
			if err != nil {
				return nil, err
			}
			res.HeldOut = append(res.HeldOut, e)
		}
	} else {
		res.Warnings = append(res.Warnings, "one run only: no held-out error (give two or more runs, e.g. at different loads)")
	}
	return res, nil
}

func selectTerms(keys []string) ([]Term, error) {
	all := Terms()
	if keys == nil {
		return all, nil
	}
	var out []Term
	for _, k := range keys {
		i := slices.IndexFunc(all, func(t Term) bool { return t.Key == k })
		if i < 0 {
			return nil, &TermError{Key: k}
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Coordinates: the fit moves x = value/ScaleUS for a microsecond term and
// x = value for a fraction, projected onto the term's range (>= 0, or
// [0, 1]). Simulated latencies are linear in the engine terms while the
// batch schedule stays the same, so in these coordinates Gauss-Newton
// steps land close to the optimum.

func (t *Term) value(x float64) float64 {
	if t.Fraction {
		return min(max(x, t.MinFraction), 1)
	}
	return t.ScaleUS * max(x, 0)
}

func (t *Term) coord(v float64) float64 {
	if t.Fraction {
		return v
	}
	return v / t.ScaleUS
}

// project clamps x onto the terms' ranges.
func project(terms []Term, active []int, x []float64) {
	for j, i := range active {
		x[j] = terms[i].coord(terms[i].value(x[j]))
	}
}

// withValues returns the base profile with the given term values.
func (p *problem) profile(terms []Term, vals []float64) *hardware.Profile {
	prof := p.base.Clone()
	for i, t := range terms {
		t.Set(prof, vals[i])
	}
	return prof
}

// residuals simulates every run under prof and returns its errors: each
// request's TPOT log error, weighted 1/sqrt(requests) so that runs count
// equally, and per run the trimmed mean (10% cut at each end) of the
// requests' TTFT log errors. A TPOT averages a request's decode steps and
// moves smoothly with the terms; a single TTFT jumps by a whole step when a
// small change of the terms moves an arrival across a step boundary, and a
// few requests delayed on a busy client would pull a plain mean, so TTFT
// enters through the trimmed mean, which ignores both.
func (p *problem) residuals(prof *hardware.Profile) ([]float64, error) {
	p.evals++
	var out []float64
	for i := range p.runs {
		pred, err := p.simulate(prof, &p.runs[i])
		if err != nil {
			return nil, err
		}
		reqs := p.runs[i].run.Requests
		w := 1 / math.Sqrt(float64(len(reqs)))
		var ttft []float64
		for j, q := range reqs {
			ttft = append(ttft, logErr(pred[j].ttft, q.TTFTms))
			if !math.IsNaN(q.TPOTms) {
				out = append(out, w*logErr(pred[j].tpot, q.TPOTms))
			}
		}
		out = append(out, trimmedMean(ttft, 0.1))
	}
	return out, nil
}

// trimmedMean is the mean of xs without the lowest and highest share of
// values (at least one value is kept).
func trimmedMean(xs []float64, share float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	k := int(share * float64(len(s)))
	if 2*k >= len(s) {
		k = (len(s) - 1) / 2
	}
	s = s[k : len(s)-k]
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return sum / float64(len(s))
}

// logErr is log(pred/obs), capped at ±5 so a wild start stays finite.
func logErr(pred, obs float64) float64 {
	if !(pred > 0) || !(obs > 0) {
		return 5
	}
	return max(-5, min(5, math.Log(pred/obs)))
}

// softScale is the scale of the soft-L1 loss: quadratic for log errors
// under about 5%, linear beyond, so a few requests hit by client-side noise
// do not steer the fit.
const softScale = 0.05

// sumSquares is the least-squares loss of the residuals.
func sumSquares(r []float64) float64 { return dot(r, r) }

// robustLoss is the soft-L1 loss of the residuals (scale 0.05: quadratic
// for errors under about 5%, linear beyond, so a few requests hit by
// client-side noise do not steer the fit).
func robustLoss(r []float64) float64 {
	const s = softScale
	sum := 0.0
	for _, e := range r {
		z := e / s
		sum += 2 * (math.Sqrt(1+z*z) - 1) * s * s
	}
	return sum
}

// fit runs the identifiability checks and the minimisation. It returns the
// fitted profile, the per-term results and the final loss.
func (p *problem) fit(maxEvals int, warnings *[]string) (*hardware.Profile, []TermResult, float64, error) {
	start := make([]float64, len(p.terms))
	out := make([]TermResult, len(p.terms))
	for i, t := range p.terms {
		start[i] = t.Get(p.base)
		out[i] = TermResult{Key: t.Key, Cause: t.Cause, Start: start[i], Value: start[i]}
	}
	// The point at which sensitivities are taken: starting values nudged
	// off their bounds, as the optimiser will see them.
	x0 := make([]float64, len(p.terms))
	v0 := make([]float64, len(p.terms))
	for i := range p.terms {
		x0[i] = p.terms[i].coord(start[i])
		v0[i] = p.terms[i].value(x0[i])
	}
	r0, err := p.residuals(p.profile(p.terms, v0))
	if err != nil {
		return nil, nil, 0, err
	}
	var basis [][]float64
	var active []int
	for i, t := range p.terms {
		v := slices.Clone(v0)
		if t.Fraction {
			v[i] = v0[i] + 0.25
			if v[i] > 1 {
				v[i] = v0[i] - 0.25
			}
			v[i] = max(v[i], t.MinFraction)
		} else {
			v[i] = v0[i] + t.ScaleUS
		}
		r, err := p.residuals(p.profile(p.terms, v))
		if err != nil {
			return nil, nil, 0, err
		}
		col := make([]float64, len(r))
		for k := range r {
			col[k] = r[k] - r0[k]
		}
		rms := norm(col) / math.Sqrt(float64(len(p.runs)))
		if rms < 1e-3 {
			out[i].Note = "held: does not change these runs' latencies"
			continue
		}
		rest := slices.Clone(col)
		for _, b := range basis {
			d := dot(rest, b)
			for k := range rest {
				rest[k] -= d * b[k]
			}
		}
		if norm(rest) < 0.2*norm(col) {
			out[i].Note = "held: moves these runs' latencies the way the terms above it do"
			continue
		}
		n := norm(rest)
		for k := range rest {
			rest[k] /= n
		}
		basis = append(basis, rest)
		active = append(active, i)
	}
	if len(active) == 0 {
		return nil, nil, 0, errors.New("observed: no engine term changes the simulated latencies of these runs")
	}
	resid := func(x []float64) ([]float64, error) {
		v := slices.Clone(start)
		for j, i := range active {
			v[i] = p.terms[i].value(x[j])
		}
		return p.residuals(p.profile(p.terms, v))
	}
	x := make([]float64, len(active))
	for j, i := range active {
		x[j] = x0[i]
	}
	proj := func(x []float64) { project(p.terms, active, x) }
	// Least squares first: from a start far off, a robust loss would
	// give the large errors that matter most almost no weight. Then the
	// soft-L1 loss from there.
	best, _, err := levenberg(resid, x, maxEvals/2, proj, false)
	if err != nil {
		return nil, nil, 0, err
	}
	best, bestF, err := levenberg(resid, best, maxEvals/3, proj, true)
	if err != nil {
		return nil, nil, 0, err
	}
	// The loss is piecewise smooth (batch schedules change at discrete
	// points), which can stall a gradient method; a pattern search over
	// shrinking steps finishes the job.
	best, bestF, err = patternSearch(resid, best, bestF, maxEvals/6, proj)
	if err != nil {
		return nil, nil, 0, err
	}
	v := slices.Clone(start)
	for j, i := range active {
		v[i] = p.terms[i].value(best[j])
		out[i].Value = v[i]
		out[i].Fitted = true
	}
	return p.profile(p.terms, v), out, bestF, nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func norm(a []float64) float64 { return math.Sqrt(dot(a, a)) }

// pred is one request's simulated latencies, ms.
type pred struct{ ttft, tpot float64 }

// simulate replays run under prof and returns its requests' latencies in
// run order.
func (p *problem) simulate(prof *hardware.Profile, pr *prepared) ([]pred, error) {
	g := p.gpu.Clone()
	g.Profile = prof
	run := pr.run
	_, cfg, err := pipeline.Prepare(sim.Deployment{Model: pr.model, GPU: g, Settings: run.Deployment})
	if err != nil {
		return nil, fmt.Errorf("run %q: %w", run.Name, err)
	}
	cfg.Clients = []string{"observed"}
	src := &source{reqs: run.Requests}
	sink := &predSink{out: make([]pred, len(run.Requests))}
	for i := range sink.out {
		sink.out[i] = pred{math.NaN(), math.NaN()}
	}
	if _, err := sim.Run(cfg, src, sink); err != nil {
		return nil, fmt.Errorf("run %q: simulating: %w", run.Name, err)
	}
	return sink.out, nil
}

// source replays a run's requests as an open-loop trace; request i of the
// run has ID i.
type source struct {
	reqs []Request
	next int
}

func (s *source) NextArrival() (workload.Request, bool) {
	if s.next >= len(s.reqs) {
		return workload.Request{}, false
	}
	q := &s.reqs[s.next]
	r := workload.Request{ID: uint64(s.next), ArrivalNS: int64(math.Round(q.ArrivalS * 1e9)),
		PromptTokens: q.Prompt, OutputTokens: q.Output, Segments: q.Segments}
	s.next++
	return r, true
}

func (s *source) OnComplete(workload.Request, int64) (workload.Request, bool) {
	return workload.Request{}, false
}

// predSink keeps each request's TTFT and TPOT by ID.
type predSink struct{ out []pred }

func (s *predSink) Request(r *traces.RequestRecord) error {
	if r.ID < uint64(len(s.out)) && r.Status == traces.StatusOK {
		s.out[r.ID] = pred{r.TTFTms, r.TPOTms}
	}
	return nil
}

func (s *predSink) Step(*traces.StepRecord) error { return nil }

// compare simulates one run under prof and summarizes its errors.
func (p *problem) compare(prof *hardware.Profile, pr *prepared) (RunError, error) {
	pred, err := p.simulate(prof, pr)
	if err != nil {
		return RunError{}, err
	}
	e := RunError{Run: pr.run.Name, Requests: len(pr.run.Requests)}
	var to, ts, po, ps, tape, pape []float64
	for i, q := range pr.run.Requests {
		to = append(to, q.TTFTms)
		ts = append(ts, pred[i].ttft)
		tape = append(tape, math.Abs(pred[i].ttft-q.TTFTms)/q.TTFTms*100)
		if !math.IsNaN(q.TPOTms) && !math.IsNaN(pred[i].tpot) {
			po = append(po, q.TPOTms)
			ps = append(ps, pred[i].tpot)
			pape = append(pape, math.Abs(pred[i].tpot-q.TPOTms)/q.TPOTms*100)
		}
	}
	e.TTFTObsMs, e.TTFTSimMs = calibrate.MidMedian(to), calibrate.MidMedian(ts)
	e.TTFTErrPct = (e.TTFTSimMs - e.TTFTObsMs) / e.TTFTObsMs * 100
	e.TTFTAPEPct = calibrate.MidMedian(tape)
	if len(po) > 0 {
		e.TPOTObsMs, e.TPOTSimMs = calibrate.MidMedian(po), calibrate.MidMedian(ps)
		e.TPOTErrPct = (e.TPOTSimMs - e.TPOTObsMs) / e.TPOTObsMs * 100
		e.TPOTAPEPct = calibrate.MidMedian(pape)
	}
	return e, nil
}

// levenberg minimises the least-squares or (robust) soft-L1 loss of
// resid(x) over the points project leaves unchanged, by projected
// Levenberg-Marquardt (iteratively reweighted for the soft-L1 loss) with a
// forward-difference Jacobian. Simulated latencies are linear in the
// engine terms while the batch schedule stays the same, so a few
// iterations suffice; maxEvals bounds the residual evaluations. It returns
// the best point and its loss.
func levenberg(resid func([]float64) ([]float64, error), x []float64, maxEvals int, project func([]float64), robust bool) ([]float64, float64, error) {
	lossOf := sumSquares
	if robust {
		lossOf = robustLoss
	}
	const h = 0.1 // coordinate step of the finite differences
	k := len(x)
	r, err := resid(x)
	if err != nil {
		return nil, 0, err
	}
	f := lossOf(r)
	used := 1
	lambda := 1e-3
	cols := make([][]float64, k)
	for iter := 0; iter < 50 && used+k < maxEvals; iter++ {
		for j := range k {
			xj := slices.Clone(x)
			xj[j] += h
			rj, err := resid(xj)
			if err != nil {
				return nil, 0, err
			}
			used++
			cols[j] = make([]float64, len(r))
			for i := range r {
				cols[j][i] = (rj[i] - r[i]) / h
			}
		}
		// Normal equations of the reweighted problem.
		a := mat.NewSymDense(k, nil)
		g := mat.NewVecDense(k, nil)
		for i := range r {
			w := 1.0
			if robust {
				z := r[i] / softScale
				w = 1 / math.Sqrt(1+z*z)
			}
			for p := range k {
				g.SetVec(p, g.AtVec(p)+w*cols[p][i]*r[i])
				for q := p; q < k; q++ {
					a.SetSym(p, q, a.At(p, q)+w*cols[p][i]*cols[q][i])
				}
			}
		}
		improved := false
		for try := 0; try < 8 && used < maxEvals; try++ {
			m := mat.NewSymDense(k, nil)
			m.CopySym(a)
			for p := range k {
				m.SetSym(p, p, a.At(p, p)*(1+lambda)+1e-12)
			}
			var dx mat.VecDense
			if err := dx.SolveVec(m, g); err != nil {
				lambda *= 10
				continue
			}
			xn := slices.Clone(x)
			for p := range k {
				xn[p] -= dx.AtVec(p)
			}
			project(xn)
			rn, err := resid(xn)
			if err != nil {
				return nil, 0, err
			}
			used++
			if fn := lossOf(rn); fn < f {
				rel := (f - fn) / max(f, 1e-300)
				x, r, f = xn, rn, fn
				lambda = max(lambda/5, 1e-9)
				improved = true
				if rel < 1e-7 {
					return x, f, nil
				}
				break
			}
			lambda *= 8
		}
		if !improved {
			break
		}
	}
	return x, f, nil
}

// patternSearch improves x (with robust loss f) by trying each coordinate
// up and down by steps of 0.2, 0.05 and 0.0125 (relative to the larger of
// 1 and |x|), keeping every improvement, within maxEvals evaluations.
func patternSearch(resid func([]float64) ([]float64, error), x []float64, f float64, maxEvals int, project func([]float64)) ([]float64, float64, error) {
	used := 0
	for _, step := range []float64{0.2, 0.05, 0.0125} {
		for improved := true; improved && used < maxEvals; {
			improved = false
			for j := range x {
				for _, sign := range []float64{1, -1} {
					if used >= maxEvals {
						break
					}
					xn := slices.Clone(x)
					xn[j] += sign * step * max(1, math.Abs(x[j]))
					project(xn)
					if xn[j] == x[j] {
						continue
					}
					r, err := resid(xn)
					if err != nil {
						return nil, 0, err
					}
					used++
					if fn := robustLoss(r); fn < f {
						x, f, improved = xn, fn, true
					}
				}
			}
		}
	}
	return x, f, nil
}
