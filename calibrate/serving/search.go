package serving

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
	"gonum.org/v1/gonum/optimize"
)

// The search's coordinates x: x[0..4] set the simulations (log step
// overhead, log per-request overhead, logit graph launch factor, log front
// end latency, logit fused GEMM input share; see fitter.decode) and
// x[nSim] = log(k-1) only reweights them.
const nSim = 5

// kOf is the benchmark's requests per client at x, k = 1 + e^x[nSim] >= 1.
func kOf(x []float64) float64 { return 1 + math.Exp(x[nSim]) }

const (
	// gridSubsampleMin is the number of training rows from which the grid
	// simulates only a stratified third of them.
	gridSubsampleMin = 12
	// refineRounds caps the trust-region rounds; a round simulates a
	// candidate, fresh slopes, or both.
	refineRounds = 12
	// refineTol stops the refinement when a gain, predicted by fresh slopes
	// or simulated where they pointed, is below this share of the loss.
	// The simulated loss itself varies by about 0.2% between nearby points
	// (requests change batches as event times shift; measured on the H100
	// rows of closed_loop_vllm.csv), so smaller gains are not resolved.
	refineTol = 2.5e-3
	// trustStart, trustMax and trustMin bound the trust region's half-width
	// in transformed coordinates (log or logit units).
	trustStart, trustMax, trustMin = 1.0, 4.0, 0.02
	// damping is the cost of a move, per squared unit of the transformed
	// coordinates, as a share of the loss (Levenberg-Marquardt's damping):
	// where the linearised loss is flat, as along the valley where the
	// step overhead and the graph launch factor trade off, the smallest
	// move wins instead of an arbitrary point of the valley.
	damping = 1e-3
)

// fitter holds one fit's training rows and counts its simulations.
type fitter struct {
	train []Row
	opts  Options // defaults applied, models resolved once
	base  func(string) (*hardware.GPU, error)
	keep  bool
	// drop are the campaign terms the fit leaves out (held at 0).
	drop CampaignTerms
	// free are the simulation coordinates the refinement moves.
	free []int

	mu            sync.Mutex // guards rowSims and progress calls
	rowSims, most int
	evals         int
}

func newFitter(train []Row, keep bool, drop CampaignTerms, opts Options) *fitter {
	opts.defaults()
	opts.Model = memoModels(train, opts.Model)
	f := &fitter{train: train, opts: opts, base: opts.GPU, keep: keep, drop: drop}
	for j := range nSim {
		switch {
		case keep && j < 3: // the profiles keep the step terms
		case j == 3 && drop.Frontend, j == 4 && drop.Fused:
		default:
			f.free = append(f.free, j)
		}
	}
	return f
}

// decode maps search coordinates to overheads.
func (f *fitter) decode(x []float64) Overheads {
	o := Overheads{
		StepOverheadUS:       math.Exp(x[0]),
		PerRequestOverheadUS: math.Exp(x[1]),
		GraphLaunchFactor:    fit.Sigmoid(x[2]),
		GraphMaxTokens:       VLLMGraphMaxTokens,
		FrontendLatencyUS:    math.Exp(x[3]),
		// A fraction in [0, 1]; the logistic reaches 0 and 1 only in the
		// limit, so values within 1e-6 of a bound are snapped to it.
		GEMMInputFusedFraction: fit.SnapUnit(fit.Sigmoid(x[4])),
		StepTermsFromProfile:   f.keep,
	}
	if f.drop.Frontend {
		o.FrontendLatencyUS = 0
	}
	if f.drop.Fused {
		o.GEMMInputFusedFraction = 0
	}
	return o
}

// raw is the overheads as the vector the predictions are linearised in.
func raw(o Overheads) [nSim]float64 {
	return [nSim]float64{o.StepOverheadUS, o.PerRequestOverheadUS, o.GraphLaunchFactor, o.FrontendLatencyUS, o.GEMMInputFusedFraction}
}

// withRaw returns o with raw coordinate j set to v.
func withRaw(o Overheads, j int, v float64) Overheads {
	switch j {
	case 0:
		o.StepOverheadUS = v
	case 1:
		o.PerRequestOverheadUS = v
	case 2:
		o.GraphLaunchFactor = v
	case 3:
		o.FrontendLatencyUS = v
	case 4:
		o.GEMMInputFusedFraction = v
	}
	return o
}

// with returns the options whose GPUs carry overheads o.
func (f *fitter) with(o Overheads) Options {
	op := f.opts
	op.GPU = func(name string) (*hardware.GPU, error) {
		g, err := f.base(name)
		if err != nil {
			return nil, err
		}
		g.Profile = o.Apply(g.EffectiveProfile())
		return g, nil
	}
	return op
}

// point is one simulation of a row set: each row's two phases, or false
// where the row could not be simulated.
type point struct {
	parts []Prediction
	ok    []bool
}

// simulate simulates rows under each overheads of set, every (overheads,
// row) pair a job for the opts.Jobs workers; out[i] is set[i]. Each job's result
// depends only on its row and overheads, so the output does not depend on
// Jobs.
func (f *fitter) simulate(rows []Row, set []Overheads) []point {
	out := make([]point, len(set))
	withs := make([]Options, len(set))
	for i, o := range set {
		out[i] = point{parts: make([]Prediction, len(rows)), ok: make([]bool, len(rows))}
		withs[i] = f.with(o)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(f.opts.Jobs, len(set)*len(rows)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				i, j := job/len(rows), job%len(rows)
				p, err := Predict(rows[j], withs[i])
				out[i].parts[j], out[i].ok[j] = p, err == nil
				f.mu.Lock()
				f.rowSims++
				if f.opts.Progress != nil {
					f.opts.Progress(f.rowSims, max(f.most, f.rowSims))
				}
				f.mu.Unlock()
			}
		}()
	}
	for job := range len(set) * len(rows) {
		next <- job
	}
	close(next)
	wg.Wait()
	f.evals += len(set)
	return out
}

// loss is the mean softL1 of the log errors of mean TTFT and TPOT over the
// simulated rows, with the phases blended for k; +Inf when none was
// simulated.
func loss(rows []Row, p point, k float64) float64 {
	var s float64
	n := 0
	for i, r := range rows {
		if !p.ok[i] {
			continue
		}
		ttft, tpot := p.parts[i].Blend(k)
		s += fit.SoftL1(math.Log(ttft/r.TTFTms), softL1Scale) + fit.SoftL1(math.Log(tpot/r.TPOTms), softL1Scale)
		n++
	}
	if n == 0 {
		return math.Inf(1)
	}
	return s / float64(n)
}

// gridKs are the grid's requests per client; changing k alone reuses the
// simulations.
var gridKs = [...]float64{2, 3, 5, 8, 12, 20, 30}

// search returns the fitted coordinates: the grid's best start, refined.
func (f *fitter) search() ([]float64, error) {
	steps, graphs := []float64{100, 500, 1500}, []float64{0.05, 0.3, 0.8}
	if f.keep {
		steps, graphs = steps[:1], graphs[:1] // unused: the profiles' own terms apply
	}
	fronts, fuseds := []float64{3000, 20000}, []float64{0.1, 0.9}
	if f.drop.Frontend {
		fronts = fronts[:1] // unused: decode holds it at 0
	}
	if f.drop.Fused {
		fuseds = fuseds[:1]
	}
	var xs [][]float64
	for _, step := range steps {
		for _, graph := range graphs {
			for _, front := range fronts {
				for _, fused := range fuseds {
					xs = append(xs, []float64{math.Log(step), math.Log(10), fit.Logit(graph), math.Log(front), fit.Logit(fused), 0})
				}
			}
		}
	}
	sub := f.gridRows()
	// Progress's total: the grid, then what a refinement typically takes
	// (the start, four sets of slopes and six candidates); it grows if the
	// refinement runs longer.
	f.most = len(xs)*len(sub) + (1+4*len(f.free)+6)*len(f.train)
	cands := make([]Overheads, len(xs))
	for i, x := range xs {
		cands[i] = f.decode(x)
	}
	pts := f.simulate(sub, cands)
	best, bestX := math.Inf(1), []float64(nil)
	for i, x := range xs {
		for _, k := range gridKs {
			if l := loss(sub, pts[i], k); l < best {
				best, bestX = l, slices.Clone(x)
				bestX[nSim] = math.Log(k - 1)
			}
		}
	}
	if bestX == nil {
		return nil, errors.New("no training row could be simulated")
	}
	return f.refine(bestX)
}

// gridRows is the training rows the grid simulates: all of them below
// gridSubsampleMin, else every third row in (model, GPU, layout, ISL, OSL,
// concurrency) order, so that each group and shape keeps its share.
func (f *fitter) gridRows() []Row {
	if len(f.train) < gridSubsampleMin {
		return f.train
	}
	sorted := slices.Clone(f.train)
	slices.SortStableFunc(sorted, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.GPU, b.GPU), cmp.Compare(a.Layout(), b.Layout()),
			cmp.Compare(a.ISL, b.ISL), cmp.Compare(a.OSL, b.OSL), cmp.Compare(a.Concurrency, b.Concurrency))
	})
	var out []Row
	for i := 1; i < len(sorted); i += 3 {
		out = append(out, sorted[i])
	}
	return out
}

// linear is the predictions linearised around a simulated centre: each
// row's four phase values plus jac (per row, per free coordinate, the
// change of the four values per unit of the raw overhead).
type linear struct {
	centre Overheads
	at     point
	jac    [][][4]float64
}

// parts4 and fromParts4 convert between a Prediction and its four values.
func parts4(p Prediction) [4]float64 {
	return [4]float64{p.BurstTTFTms, p.BurstTPOTms, p.SteadyTTFTms, p.SteadyTPOTms}
}

func fromParts4(v [4]float64) Prediction {
	return Prediction{BurstTTFTms: v[0], BurstTPOTms: v[1], SteadyTTFTms: v[2], SteadyTPOTms: v[3]}
}

// fdStep is the finite-difference step of raw coordinate j at value v:
// 10% of the value with a floor, and inward for the fractions.
func fdStep(j int, v float64) float64 {
	switch j {
	case 0:
		return max(0.1*v, 10)
	case 1:
		return max(0.1*v, 1)
	case 3:
		return max(0.1*v, 200)
	}
	if v+0.05 > 1 {
		return -0.05
	}
	return 0.05
}

// linearise simulates a forward step in every free coordinate from the
// simulated centre at and returns the linearised predictions.
func (f *fitter) linearise(centre Overheads, at point) linear {
	c := raw(centre)
	steps := make([]Overheads, len(f.free))
	hs := make([]float64, len(f.free))
	for i, j := range f.free {
		hs[i] = fdStep(j, c[j])
		steps[i] = withRaw(centre, j, c[j]+hs[i])
	}
	pts := f.simulate(f.train, steps)
	lin := linear{centre: centre, at: at, jac: make([][][4]float64, len(f.train))}
	for r := range f.train {
		lin.jac[r] = make([][4]float64, len(f.free))
		if !at.ok[r] {
			continue
		}
		a := parts4(at.parts[r])
		for i := range f.free {
			if !pts[i].ok[r] {
				continue // treated as flat in this coordinate
			}
			b := parts4(pts[i].parts[r])
			for q := range a {
				lin.jac[r][i][q] = (b[q] - a[q]) / hs[i]
			}
		}
	}
	return lin
}

// stepNorm is the largest move of a free coordinate from x to c.
func stepNorm(free []int, x, c []float64) float64 {
	n := 0.0
	for _, j := range free {
		n = max(n, math.Abs(c[j]-x[j]))
	}
	return n
}

// update corrects the linearisation with a simulated point got under
// overheads o (Broyden's rank-one update, row by row): afterwards the
// linear model reproduces got exactly, and it is unchanged along every
// direction orthogonal to the step.
func (lin *linear) update(free []int, o Overheads, got point) {
	c, v := raw(lin.centre), raw(o)
	s := make([]float64, len(free))
	var ss float64
	for i, j := range free {
		s[i] = v[j] - c[j]
		ss += s[i] * s[i]
	}
	if ss == 0 {
		return
	}
	for r := range lin.jac {
		if !lin.at.ok[r] || !got.ok[r] {
			continue
		}
		a, b := parts4(lin.at.parts[r]), parts4(got.parts[r])
		for q := range a {
			res := b[q] - a[q]
			for i := range free {
				res -= lin.jac[r][i][q] * s[i]
			}
			for i := range free {
				lin.jac[r][i][q] += res * s[i] / ss
			}
		}
	}
}

// predict is the linearised prediction under overheads o.
func (f *fitter) predict(lin linear, o Overheads) point {
	c, v := raw(lin.centre), raw(o)
	p := point{parts: make([]Prediction, len(f.train)), ok: lin.at.ok}
	for r := range f.train {
		if !lin.at.ok[r] {
			continue
		}
		a := parts4(lin.at.parts[r])
		for i, j := range f.free {
			d := v[j] - c[j]
			for q := range a {
				a[q] += lin.jac[r][i][q] * d
			}
		}
		for q := range a {
			a[q] = max(a[q], 1e-6) // a linearised time stays positive
		}
		p.parts[r] = fromParts4(a)
	}
	return p
}

// refine runs the trust-region search on every training row from x0 and
// returns the best point simulated.
func (f *fitter) refine(x0 []float64) ([]float64, error) {
	x := slices.Clone(x0)
	centre := f.decode(x)
	at := f.simulate(f.train, []Overheads{centre})[0]
	cur := loss(f.train, at, kOf(x))
	if math.IsInf(cur, 1) {
		return nil, errors.New("no training row could be simulated at the grid's start")
	}
	radius := trustStart
	lin := f.linearise(centre, at)
	fresh := true // lin's slopes are finite differences at its centre
	for range refineRounds {
		cand, pred := f.minimiseLinear(lin, x, radius)
		if cur-pred <= refineTol*cur {
			if fresh {
				break // the linearised loss sees no worthwhile gain
			}
			lin, fresh = f.linearise(centre, at), true // the updated slopes may be stale
			continue
		}
		o := f.decode(cand)
		got := f.simulate(f.train, []Overheads{o})[0]
		l := loss(f.train, got, kOf(cand))
		if !(l < cur) {
			radius = stepNorm(f.free, x, cand) / 4 // below the step just tried
			if radius < trustMin {
				break
			}
			if fresh {
				// Correct the slopes along the step with what the simulation
				// showed (Broyden's update).
				lin.update(f.free, o, got)
			} else {
				lin, fresh = f.linearise(centre, at), true
			}
			continue
		}
		gain := cur - l
		if gain > 0.75*(cur-pred) {
			radius = min(2*radius, trustMax)
		} else if gain < 0.25*(cur-pred) {
			radius /= 2
		}
		x, centre, at, cur = cand, o, got, l
		if gain <= refineTol*(cur+gain) {
			if fresh {
				break // a small gain where fresh slopes pointed: converged
			}
			// Stale slopes may have pointed badly: take fresh ones.
			lin, fresh = f.linearise(centre, at), true
			continue
		}
		// Move the model's centre to the accepted point: Broyden's update
		// makes it reproduce the simulation there.
		lin.update(f.free, o, got)
		lin.centre, lin.at, fresh = o, got, false
	}
	return x, nil
}

// minimiseLinear minimises the linearised loss over the free coordinates
// within radius of x (a coordinate moves by radius x tanh(z)) and over k
// (unbounded: blending is exact), by Nelder-Mead without simulating. It
// returns the minimiser and its linearised loss.
func (f *fitter) minimiseLinear(lin linear, x []float64, radius float64) ([]float64, float64) {
	point := func(z []float64) []float64 {
		c := slices.Clone(x)
		for i, j := range f.free {
			c[j] = x[j] + radius*math.Tanh(z[i])
		}
		c[nSim] = x[nSim] + z[len(f.free)]
		return c
	}
	lossAt := func(z []float64) float64 {
		c := point(z)
		return loss(f.train, f.predict(lin, f.decode(c)), kOf(c))
	}
	damp := damping * lossAt(make([]float64, len(f.free)+1))
	obj := func(z []float64) float64 {
		var move float64
		for i := range f.free {
			d := radius * math.Tanh(z[i])
			move += d * d
		}
		return lossAt(z) + damp*move
	}
	z0 := make([]float64, len(f.free)+1)
	res, err := optimize.Minimize(optimize.Problem{Func: obj}, z0, &optimize.Settings{
		FuncEvaluations: 4000,
		Converger:       &optimize.FunctionConverge{Absolute: 1e-10, Relative: 1e-8, Iterations: 100},
	}, &optimize.NelderMead{SimplexSize: 0.5})
	if res == nil || err != nil && res.X == nil {
		return x, lossAt(z0)
	}
	return point(res.X), lossAt(res.X)
}
