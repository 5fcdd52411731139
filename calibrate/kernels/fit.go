package kernels

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/roofsim/roofsim/calibrate/internal/fit"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/roofline"
)

// Sample is one measured operator run reduced to what the efficiency model
// sees: its work, the GPU rates it runs against, and the measured time.
type Sample struct {
	// FLOPs and Bytes are the operator's roofline work (roofline.Cost).
	FLOPs, Bytes float64
	// PeakFLOPS is the compute peak for the operator's precision (FLOP/s).
	PeakFLOPS float64
	// BandwidthBytesPerSec is the nominal DRAM bandwidth (bytes/s).
	BandwidthBytesPerSec float64
	// Seconds is the measured time.
	Seconds float64
	// SeqHeads is the number of (request, KV head) pairs a batched kernel
	// (attention) serves in this run: batch x KV heads; 0 for kernels
	// without that structure.
	SeqHeads int
	// M and N are a GEMM's output shape and K its depth (roofline.Cost.M,
	// N, K); 0 for other operators. A tiled efficiency indexes its compute
	// curve by M and N and scales it by K (hardware.OpEfficiency.ComputeAt).
	M, N, K int
	// L2Bytes is the GPU's L2 capacity in bytes; operators that fit in it
	// were timed from L2 (hardware.OpEfficiency.BenchBandwidth). 0: unknown.
	L2Bytes float64
	// Depth is the FLOP-weighted harmonic mean reduction depth of a fused
	// multi-GEMM kernel (a fused MoE's gate/up and down GEMMs,
	// roofline.MoEReductionDepth), elements; when some sample has one, the
	// fit adds hardware.OpEfficiency.ExpertKHalf, which scales the compute
	// time by 1 + ExpertKHalf/Depth. 0 for other operators.
	Depth float64
	// DefaultTiles marks a fused-MoE row whose expert shape has no tuned
	// tile configuration for the GPU (hardware.MoETileConfigs): its compute
	// time is multiplied by hardware.OpEfficiency.DefaultTilesSlowdown at
	// its tokens per expert (FLOPs carries them, moeSample). When some
	// rows of a family have it and some do not, the fit adds the
	// DefaultTiles curve.
	DefaultTiles bool
	// OffsetSeconds is the time of the other operators a measured module
	// runs besides the fitted one (an attention module's projections),
	// priced by the profile and added to the prediction; 0 for a table
	// that times the operator alone.
	OffsetSeconds float64
}

// Predict is the model time of s under e: roofline.BatchedOpSeconds (which
// is roofline.OpSeconds when s.SeqHeads is 0), plus s.OffsetSeconds, at
// least e's host floor (hardware.OpEfficiency.BenchSeconds).
func (s Sample) Predict(e hardware.OpEfficiency) float64 {
	bw := e.BenchBandwidth(s.BandwidthBytesPerSec, s.Bytes, s.L2Bytes)
	peak := s.PeakFLOPS * e.ExpertDepthFactor(s.Depth)
	if s.DefaultTiles {
		peak /= e.DefaultTilesSlowdown(s.FLOPs)
	}
	return e.BenchSeconds(roofline.BatchedOpSeconds(roofline.Cost{FLOPs: s.FLOPs, ActBytes: s.Bytes, M: s.M, N: s.N, K: s.K, Pairs: s.SeqHeads}, s.SeqHeads, e, peak, bw) + s.OffsetSeconds)
}

// MaxFitRows is the most rows the optimizer sees per fit; larger families
// are fitted on a seeded random subset of this size.
const MaxFitRows = 3000

// SearchRows is the most rows the multi-start search sees: the restarts
// run on a seeded random subset of this size (the loss surface of a
// thousand rows already has the full set's shape), and only the two best
// starts are polished on up to MaxFitRows rows.
const SearchRows = 1000

// Exponent bounds of a fitted curve.
const (
	minExp = 0.25
	maxExp = 4.0
)

// Parameter vector layout (transformed coordinates, so every point is a
// valid profile):
//
//	x[0..2] compute curve: Max = sigmoid(x0), Half = exp(x1), Exp = 0.25 + 3.75 sigmoid(x2)
//	x[3..5] memory curve, same transform
//	x[6]    LaunchUS = exp(x6)
//	x[7]    PerSeqHeadUS = exp(x7), fitted only when some sample has
//	        SeqHeads > 0 (0 otherwise)
//	x[8]    KHalf = exp(x8), fitted only when the efficiency is tiled and
//	        some sample has K > 0 (0 otherwise)
//	x[9]    InputElementNS = exp(x9), fitted under the same condition
//	x[10]   OutputElementNS = exp(x10), fitted under the same condition
//	x[11]   InputSpillNS = exp(x11), fitted under the same condition
//	x[12]   InputSpillElements = exp(x12), fitted under the same condition
//	x[13]   L2Speedup = exp(x13), fitted when some sample has L2Bytes > 0
//	x[14]   ExpertKHalf = exp(x14), fitted when some sample has Depth > 0
//	x[15..17] DefaultTiles curve: Max = MaxDefaultTilesSlowdown sigmoid(x15),
//	        Half = exp(x16), Exp as the other curves; fitted when some
//	        samples have DefaultTiles and some do not
//	x[18]   BenchHostUS = exp(x18), fitted only with fitOptions.hostFloor
//	        (hostFloorFit), which then holds the memory curve and the
//	        launch at their start
const nParams = 19

// localStarts is the number of starts around the default start that join
// each restart of a fit (fitOp), maxEvals the most loss-and-gradient
// evaluations of one quasi-Newton run, and nmExplore the Nelder-Mead
// evaluations that explore from a start before one (searchFrom).
const (
	localStarts = 2
	maxEvals    = 1000
	nmExplore   = 600
)

// KernelLossScale is the log error (about 10%) beyond which a kernel row's
// loss grows linearly rather than quadratically (softL1). Repeated runs and
// neighbouring shapes of one kernel agree to a few percent; a row off by
// much more is a different kernel configuration chosen by the library's
// heuristics (a split-k or tile switch at one shape band), which a smooth
// per-family model cannot follow and should not be pulled toward.
const KernelLossScale = 0.1

func curveFrom(a, b, e float64) hardware.Curve {
	return hardware.Curve{Max: fit.Sigmoid(a), Half: math.Exp(b), Exp: minExp + (maxExp-minExp)*fit.Sigmoid(e)}
}

func curveTo(c hardware.Curve, logX float64) (a, b, e float64) {
	a = fit.Logit(c.Max)
	b = logX
	if c.Half > 0 {
		b = math.Log(c.Half)
	}
	ex := c.Exp
	if ex == 0 {
		ex = 1
	}
	e = fit.Logit((math.Min(math.Max(ex, minExp), maxExp) - minExp) / (maxExp - minExp))
	return a, b, e
}

// effFrom is the efficiency at parameter vector x, with tm x tn output
// tiles (0 x 0: compute curve indexed by FLOPs).
func effFrom(x []float64, perSeq, depth, l2, expDepth, tiles, host bool, tm, tn int) hardware.OpEfficiency {
	e := hardware.OpEfficiency{
		Compute:  curveFrom(x[0], x[1], x[2]),
		Memory:   curveFrom(x[3], x[4], x[5]),
		LaunchUS: math.Exp(x[6]),
		TileM:    tm,
		TileN:    tn,
	}
	if perSeq {
		e.PerSeqHeadUS = math.Exp(x[7])
	}
	if l2 {
		e.L2Speedup = math.Exp(x[13])
	}
	if expDepth {
		e.ExpertKHalf = math.Exp(x[14])
	}
	if tiles {
		e.DefaultTiles = defaultTilesFrom(x[15], x[16], x[17])
	}
	if host {
		e.BenchHostUS = math.Exp(x[18])
	}
	if depth && e.Tiled() {
		e.KHalf = math.Exp(x[8])
		e.InputElementNS = math.Exp(x[9])
		e.OutputElementNS = math.Exp(x[10])
		e.InputSpillNS = math.Exp(x[11])
		e.InputSpillElements = math.Exp(x[12])
	}
	return e
}

// prepared holds per-sample constants of the objective.
type prepared struct {
	tc, tm     []float64 // roofline compute and memory times (s); 0 when no work
	logF, logB []float64
	logT       []float64
	seqs       []float64 // (request, KV head) pairs per run (Sample.SeqHeads)
	perSeq     bool      // some sample has SeqHeads > 0
	k          []float64 // GEMM depth (Sample.K); 0 when unknown
	mk         []float64 // input elements M*K times 1e-9 (s per InputElementNS)
	mn         []float64 // output elements M*N times 1e-9 (s per OutputElementNS)
	mkElems    []float64 // input elements M*K (unscaled: the spill share reads it)
	depth      bool      // tiled and some sample has K > 0: KHalf is fitted
	l2res      []float64 // share of the operator resident in L2 (BenchBandwidth)
	off        []float64 // Sample.OffsetSeconds
	l2         bool      // some sample has L2Bytes > 0: L2Speedup is fitted
	invDepth   []float64 // 1/Sample.Depth; 0 without one
	expDepth   bool      // some sample has Depth > 0: ExpertKHalf is fitted
	dflt       []bool    // Sample.DefaultTiles
	tiles      bool      // some samples have DefaultTiles and some not: the DefaultTiles curve is fitted
	host       bool      // fitOptions.hostFloor: BenchHostUS is fitted
}

// defaultTilesFrom is the DefaultTiles curve at its fit coordinates.
func defaultTilesFrom(a, b, e float64) hardware.Curve {
	return hardware.Curve{Max: hardware.MaxDefaultTilesSlowdown * fit.Sigmoid(a), Half: math.Exp(b), Exp: minExp + (maxExp-minExp)*fit.Sigmoid(e)}
}

// prepare computes the objective's constants; the compute curve's index
// (logF) is the FLOPs, or the output tile count when e is tiled
// (hardware.OpEfficiency.ComputeIndex).
func prepare(samples []Sample, e hardware.OpEfficiency) *prepared {
	n := len(samples)
	p := &prepared{tc: make([]float64, n), tm: make([]float64, n), logF: make([]float64, n),
		logB: make([]float64, n), logT: make([]float64, n), seqs: make([]float64, n), k: make([]float64, n), mk: make([]float64, n), mn: make([]float64, n), mkElems: make([]float64, n), l2res: make([]float64, n), off: make([]float64, n), invDepth: make([]float64, n),
		dflt: make([]bool, n)}
	nDefault := 0
	for i, s := range samples {
		if s.DefaultTiles {
			p.dflt[i] = true
			nDefault++
		}
		p.off[i] = s.OffsetSeconds
		p.seqs[i] = float64(s.SeqHeads)
		if e.Tiled() && s.K > 0 {
			p.k[i] = float64(s.K)
			p.mk[i] = float64(s.M) * float64(s.K) * 1e-9
			p.mn[i] = float64(s.M) * float64(s.N) * 1e-9
			p.mkElems[i] = float64(s.M) * float64(s.K)
			p.depth = true
		}
		if s.SeqHeads > 0 {
			p.perSeq = true
		}
		if s.Depth > 0 {
			p.invDepth[i] = 1 / s.Depth
			p.expDepth = true
		}
		if s.L2Bytes > 0 && s.Bytes > 0 {
			p.l2res[i] = hardware.Crossover(s.L2Bytes, s.Bytes)
			p.l2 = true
		}
		if s.FLOPs > 0 {
			p.tc[i] = s.FLOPs / s.PeakFLOPS
			p.logF[i] = math.Log(e.ComputeIndex(s.FLOPs, s.M, s.N))
		}
		if s.Bytes > 0 {
			p.tm[i] = s.Bytes / s.BandwidthBytesPerSec
			p.logB[i] = math.Log(e.MemoryIndexOf(s.Bytes, s.SeqHeads))
		}
		p.logT[i] = math.Log(s.Seconds)
	}
	p.tiles = nDefault > 0 && nDefault < n
	return p
}

// loss is the mean robust loss (softL1 at KernelLossScale) of the model's
// log errors at x: squared log error for rows within about 10%, growing
// linearly beyond. With
// eff = Max/(1+(Half/x)^Exp), time/eff = t (1 + exp(Exp (log Half - log x)))/Max,
// which equals hardware.Curve.At exactly.
func (p *prepared) loss(x []float64) float64 { return p.eval(x, true) }

// rmsLogError is sqrt(mean squared log error) of the model at x.
func (p *prepared) rmsLogError(x []float64) float64 { return math.Sqrt(p.eval(x, false)) }

// termValues are the fitted terms of parameter vector x outside the two
// curves, in the units the model adds them: launch and host floor in
// seconds, perSeq in seconds per sequence-head, kHalf and spillH in k
// steps and elements, inNS, outNS and spillNS in ns per element, l2s and
// expKHalf dimensionless. A term the prepared rows do not fit is 0.
type termValues struct {
	launch, host, perSeq, kHalf, inNS, outNS, spillNS, spillH, l2s, expKHalf float64
}

// terms decodes x's terms (termValues) as eval and lossGrad both read them.
func (p *prepared) terms(x []float64) termValues {
	v := termValues{launch: math.Exp(x[6]) * 1e-6}
	if p.host {
		v.host = math.Exp(x[18]) * 1e-6
	}
	if p.expDepth {
		v.expKHalf = math.Exp(x[14])
	}
	if p.l2 {
		v.l2s = math.Exp(x[13])
	}
	if p.perSeq {
		v.perSeq = math.Exp(x[7]) * 1e-6
	}
	if p.depth {
		v.kHalf, v.inNS, v.outNS = math.Exp(x[8]), math.Exp(x[9]), math.Exp(x[10])
		v.spillNS, v.spillH = math.Exp(x[11]), math.Exp(x[12])
	}
	return v
}

// eval is the mean softL1 (robust) or squared log error of the model at x.
func (p *prepared) eval(x []float64, robust bool) float64 {
	mc, ec := fit.Sigmoid(x[0]), minExp+(maxExp-minExp)*fit.Sigmoid(x[2])
	mm, em := fit.Sigmoid(x[3]), minExp+(maxExp-minExp)*fit.Sigmoid(x[5])
	bc, bm := x[1], x[4]
	tv := p.terms(x)
	launch, host, perSeq, kHalf, inNS, outNS, spillNS, spillH, l2s, expKHalf := tv.launch, tv.host, tv.perSeq, tv.kHalf, tv.inNS, tv.outNS, tv.spillNS, tv.spillH, tv.l2s, tv.expKHalf
	var dt hardware.Curve
	var dtLogHalf float64
	if p.tiles {
		dt = defaultTilesFrom(x[15], x[16], x[17])
		dtLogHalf = math.Log(dt.Half)
	}
	var sum float64
	for i := range p.logT {
		var t float64
		if tc := p.tc[i]; tc > 0 {
			t = tc * (1 + math.Exp(ec*(bc-p.logF[i]))) / mc
			if k := p.k[i]; k > 0 {
				// 1/DepthFactor = (K+KHalf)/K.
				t *= 1 + kHalf/k
			}
			if p.expDepth {
				// 1/ExpertDepthFactor = 1 + ExpertKHalf/Depth.
				t *= 1 + expKHalf*p.invDepth[i]
			}
			if p.tiles && p.dflt[i] {
				// DefaultTilesSlowdown at the row's tokens per expert
				// (logF), as hardware.Curve.At computes it.
				t *= 1 + dt.Max/(1+math.Exp(dt.Exp*(dtLogHalf-p.logF[i])))
			}
		}
		if tm := p.tm[i]; tm > 0 {
			den := mm
			if p.l2 {
				den = mm * (1 + l2s*p.l2res[i])
			}
			if v := tm * (1 + math.Exp(em*(bm-p.logB[i]))) / den; v > t {
				t = v
			}
		}
		// Terms a family cannot have (no per-pair, depth or L2 structure)
		// are zero and left out: adding an exact zero changes no bit.
		t += launch
		if p.perSeq {
			t += perSeq * p.seqs[i]
		}
		if p.depth {
			in := inNS
			if p.mkElems[i] > 0 {
				in += spillNS * hardware.Crossover(p.mkElems[i], spillH)
			}
			t += in * p.mk[i]
			t += outNS * p.mn[i]
		}
		t += p.off[i]
		if p.host {
			t = max(t, host)
		}
		d := math.Log(t) - p.logT[i]
		if robust {
			sum += fit.SoftL1(d, KernelLossScale)
		} else {
			sum += d * d
		}
	}
	return sum / float64(len(p.logT))
}

// FitResult is one fitted operator family.
type FitResult struct {
	Efficiency hardware.OpEfficiency
	// Loss is the fit's objective at the optimum over every sample: the
	// mean softL1 of the log errors (prepared.loss).
	Loss float64
	// RMSLogError is sqrt(mean (log t_pred - log t_meas)^2) at the optimum.
	RMSLogError float64
	// x is the optimum in the fit's coordinates: a warm start for a refit
	// of the same family (fitOptions.warm).
	x [nParams]float64
}

// errNoSamples is returned when a fit has nothing to fit.
var errNoSamples = errors.New("no samples to fit")

// FitOpEfficiency fits the compute curve, memory curve and launch cost of
// one operator family to samples by robust least squares on log time
// (softL1 at KernelLossScale: rows within about 10% weigh as in least
// squares, rows far off weigh linearly), with
// a search (searchFrom: a short Nelder-Mead exploration, then limited-memory
// BFGS on the loss's analytic gradient, prepared.lossGrad) started from
// init, from restarts-1 further points drawn from a PCG source seeded with
// seed, and from localStarts x restarts points around init's
// (deterministic: the same inputs and seed give the same result). The
// starts search on up to SearchRows rows; the two best are polished by
// BFGS on up to MaxFitRows rows and the better kept. Max stays in (0, 1], Half > 0
// and Exp in [0.25, 4] by construction. init's TileM and TileN are kept,
// not fitted: when set, the compute curve is indexed by the output tile
// count (Sample.M, N); so is its MemoryIndex (the memory curve is read at
// bytes per pair under hardware.MemoryByPairBytes).
// Cost: O((1 + localStarts) * restarts * (nmExplore + evaluations) *
// SearchRows), with evaluations (each a loss and its gradient, about 1.5
// loss passes) at most 2 maxEvals per start and typically a few hundred.
func FitOpEfficiency(samples []Sample, init hardware.OpEfficiency, seed uint64, restarts int) (FitResult, error) {
	return fitOp(samples, init, seed, fitOptions{restarts: restarts})
}

// fitOptions tunes fitOp.
type fitOptions struct {
	restarts int
	// warm, when set, is a previous optimum of the same family and tiling
	// (a fit on a subset of these rows): the search starts from it and
	// from the default start only, instead of from restarts points.
	warm *[nParams]float64
	// hostFloor fits the benchmark's host floor (BenchHostUS) and holds
	// init's memory curve and launch fixed (hostFloorFit).
	hostFloor bool
}

// fitOp is FitOpEfficiency with fitOptions.
func fitOp(samples []Sample, init hardware.OpEfficiency, seed uint64, fo fitOptions) (FitResult, error) {
	if len(samples) == 0 {
		return FitResult{}, errNoSamples
	}
	restarts := max(fo.restarts, 1)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	fitSet := samples
	if len(samples) > MaxFitRows {
		// A seeded random subset keeps the optimizer's cost bounded; the
		// reported errors are still computed on every row.
		idx := rng.Perm(len(samples))[:MaxFitRows]
		sort.Ints(idx)
		fitSet = pick(samples, idx)
	}
	searchSet := fitSet
	if len(fitSet) > SearchRows {
		idx := rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d)).Perm(len(fitSet))[:SearchRows]
		sort.Ints(idx)
		searchSet = pick(fitSet, idx)
	}
	p := prepare(fitSet, init)
	p.host = fo.hostFloor
	medF, medB := medianLog(p.logF), medianLog(p.logB)
	// A tiny pull toward the start point keeps parameters that the data
	// cannot identify (e.g. the compute curve of a memory-bound family)
	// finite and deterministic; it is far below the data term.
	x0 := make([]float64, nParams)
	cInit := init.Compute
	if init.Tiled() {
		// A FLOP-scale Half means nothing as a tile count: start at the
		// median tile count.
		cInit.Half = 0
	}
	x0[0], x0[1], x0[2] = curveTo(cInit, medF)
	x0[3], x0[4], x0[5] = curveTo(init.Memory, medB)
	// Launch starts at 90% of the fastest measured run: small kernels are
	// launch-bound, and a start far from it leaves the search stranded.
	minT := math.Inf(1)
	for _, s := range samples {
		if r := s.Seconds - s.OffsetSeconds; r > 0 {
			minT = math.Min(minT, r)
		}
	}
	if math.IsInf(minT, 1) {
		minT = 1e-6
	}
	x0[6] = math.Log(math.Max(0.9*minT*1e6, 0.01))
	// The host floor starts at the fastest measured run; the launch it
	// hides is held at init's (hostFloorFit).
	x0[18] = x0[6]
	if fo.hostFloor {
		x0[6] = math.Log(math.Max(init.LaunchUS, 0.01))
		x0[18] = math.Log(math.Max(minT*1e6, 0.01))
	}
	// The per-pair cost starts at init's value, or 0.1 us (a few hundred
	// cycles per request and KV head) when init has none.
	x0[7] = math.Log(0.1)
	if init.PerSeqHeadUS > 0 {
		x0[7] = math.Log(init.PerSeqHeadUS)
	}
	// The depth term starts at one 128-deep k tile of fixed cost per
	// output tile, or init's value.
	x0[8] = math.Log(128)
	if init.KHalf > 0 {
		x0[8] = math.Log(init.KHalf)
	}
	// The input term starts small (1 ps per element, well under a
	// bandwidth-bound pass over a bf16 input) unless init has one.
	x0[9] = math.Log(1e-3)
	if init.InputElementNS > 0 {
		x0[9] = math.Log(init.InputElementNS)
	}
	// The output term starts at the same small value.
	x0[10] = math.Log(1e-3)
	if init.OutputElementNS > 0 {
		x0[10] = math.Log(init.OutputElementNS)
	}
	// The spill term starts negligible, phasing in at 16M input elements
	// (32 MB of bf16 activations, a large share of a data-centre GPU's L2).
	x0[11], x0[12] = math.Log(1e-4), math.Log(16e6)
	if init.InputSpillNS > 0 && init.InputSpillElements > 0 {
		x0[11], x0[12] = math.Log(init.InputSpillNS), math.Log(init.InputSpillElements)
	}
	// The warm-L2 speedup starts at 1 (L2 twice as fast as DRAM).
	x0[13] = 0
	if init.L2Speedup > 0 {
		x0[13] = math.Log(init.L2Speedup)
	}
	// The experts' depth term starts at a 64-deep k tile of fixed cost
	// (one BLOCK_SIZE_K step of vLLM's Triton kernel's larger configs),
	// or init's value.
	x0[14] = math.Log(64)
	if init.ExpertKHalf > 0 {
		x0[14] = math.Log(init.ExpertKHalf)
	}
	// The default-tiles slowdown starts at 1 (default tiles twice the
	// tuned time at large batches), half of it at the median compute
	// index, or init's curve.
	x0[15], x0[16], x0[17] = fit.Logit(1.0/hardware.MaxDefaultTilesSlowdown), medF, 0
	if d := init.DefaultTiles; d.Max > 0 && d.Half > 0 {
		_, x0[16], x0[17] = curveTo(d, medF)
		x0[15] = fit.Logit(math.Min(d.Max/hardware.MaxDefaultTilesSlowdown, 1-1e-9))
	}
	// The optimiser moves only the parameters the samples can show: the
	// per-pair, depth and L2 terms of a family without such rows stay at
	// their start (inactive coordinates only ever met a pull toward it).
	act := activeParams(p)
	prior := append([]float64(nil), x0...)
	expand := func(xa []float64) []float64 {
		x := append([]float64(nil), x0...)
		for i, j := range act {
			x[j] = xa[i]
		}
		return x
	}
	// objOn is the objective on p's rows: the loss with the pull toward the
	// start; objGradOn also writes its gradient.
	objOn := func(p *prepared) func(xa []float64) float64 {
		return func(xa []float64) float64 {
			var pen float64
			for i, j := range act {
				d := xa[i] - prior[j]
				pen += d * d
			}
			return p.loss(expand(xa)) + 1e-8*pen
		}
	}
	objGradOn := func(p *prepared) func(xa, ga []float64) float64 {
		g := make([]float64, nParams)
		return func(xa, ga []float64) float64 {
			v := p.lossGrad(expand(xa), g)
			var pen float64
			for i, j := range act {
				d := xa[i] - prior[j]
				pen += d * d
				ga[i] = g[j] + 2e-8*d
			}
			return v + 1e-8*pen
		}
	}
	searchP := p
	if len(searchSet) < len(fitSet) {
		searchP = prepare(searchSet, init)
		searchP.host = p.host
	}
	project := func(x []float64) []float64 {
		xa := make([]float64, len(act))
		for i, j := range act {
			xa[i] = x[j]
		}
		return xa
	}
	starts := [][]float64{project(x0)}
	if fo.warm != nil {
		starts = append(starts, project(fo.warm[:]))
		restarts = 0
	}
	for r := 1; r < restarts; r++ {
		s := make([]float64, nParams)
		s[0] = fit.Logit(0.3 + 0.69*rng.Float64())
		s[1] = medF + 4*(rng.Float64()-0.5)*2
		s[2] = 4 * (rng.Float64() - 0.5)
		s[3] = fit.Logit(0.3 + 0.69*rng.Float64())
		s[4] = medB + 4*(rng.Float64()-0.5)*2
		s[5] = 4 * (rng.Float64() - 0.5)
		s[6] = x0[6] + (rng.Float64()-0.5)*2
		s[7] = x0[7]
		if p.perSeq {
			s[7] += (rng.Float64() - 0.5) * 4
		}
		s[8], s[9], s[10], s[11], s[12] = x0[8], x0[9], x0[10], x0[11], x0[12]
		if p.depth {
			s[8] += (rng.Float64() - 0.5) * 4
			s[9] += rng.Float64() * 4
			s[10] += rng.Float64() * 4
			s[11] += rng.Float64() * 6
			s[12] += (rng.Float64() - 0.5) * 4
		}
		s[13] = x0[13]
		if p.l2 {
			s[13] += (rng.Float64() - 0.5) * 3
		}
		s[14] = x0[14]
		if p.expDepth {
			s[14] += (rng.Float64() - 0.5) * 4
		}
		s[18] = x0[18]
		if p.host {
			s[3], s[4], s[5], s[6] = x0[3], x0[4], x0[5], x0[6]
			s[18] += (rng.Float64() - 0.5) * 2
		}
		s[15], s[16], s[17] = x0[15], x0[16], x0[17]
		if p.tiles {
			s[15] += (rng.Float64() - 0.5) * 4
			s[16] += (rng.Float64() - 0.5) * 4
			s[17] = 4 * (rng.Float64() - 0.5)
		}
		starts = append(starts, project(s))
	}
	// Quasi-Newton runs are cheap, so each restart is joined by
	// localStarts more starts drawn around the default start (every
	// coordinate the rows constrain moved by up to +-2): a second basin
	// near the usual optimum is found from there more often than from the
	// wide restarts. A warm-started fit keeps its two starts.
	if fo.warm == nil {
		for r := 0; r < localStarts*restarts; r++ {
			s := append([]float64(nil), x0...)
			for _, j := range act {
				s[j] += (rng.Float64() - 0.5) * 4
			}
			starts = append(starts, project(s))
		}
	}
	results := make([][]float64, len(starts))
	vals := make([]float64, len(starts))
	// Starts are independent problems; results are collected by index, so
	// the outcome does not depend on scheduling.
	onTwoWorkers(len(starts), func(i int) {
		results[i], vals[i] = searchFrom(objOn(searchP), objGradOn(searchP), starts[i])
	})
	// The two best searches are polished on the fit rows and the better
	// kept: the search rows are a subset, and their best is not always the
	// full set's.
	order := make([]int, len(starts))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] < vals[order[b]] })
	// The polishes are independent too: they run side by side and are
	// compared in the order of their searches' values.
	top := order[:min(2, len(order))]
	polished := make([][]float64, len(top))
	polishedVals := make([]float64, len(top))
	onTwoWorkers(len(top), func(k int) {
		polished[k], polishedVals[k] = fit.LBFGS(objGradOn(p), results[top[k]], maxEvals)
	})
	var xa []float64
	bestVal := math.Inf(1)
	for k := range top {
		if polishedVals[k] < bestVal {
			xa, bestVal = polished[k], polishedVals[k]
		}
	}
	x := expand(xa)
	all := p
	if len(fitSet) < len(samples) {
		all = prepare(samples, init)
		all.host = p.host
	}
	r := FitResult{Efficiency: effFrom(x, p.perSeq, p.depth, p.l2, p.expDepth, p.tiles, p.host, init.TileM, init.TileN), Loss: all.loss(x), RMSLogError: all.rmsLogError(x)}
	// The memory curve was fitted on init's index (prepare's logB).
	r.Efficiency.MemoryIndex = init.MemoryIndex
	copy(r.x[:], x)
	return r, nil
}

// searchFrom runs the two searches of one start and returns the better
// end point and its value: limited-memory BFGS from where nmExplore
// Nelder-Mead evaluations of f took x0, and from x0 itself (fg is f with
// its gradient). The simplex's first moves are large and cross the kinks
// of the model (the max of the compute and memory times, row by row) at
// which a gradient method stops, so it reaches basins that the gradient
// search alone misses; the quasi-Newton run then converges within the
// basin in a few hundred evaluations, where the simplex would need
// thousands.
func searchFrom(f func([]float64) float64, fg func(x, g []float64) float64, x0 []float64) ([]float64, float64) {
	xn, _ := fit.NelderMead(f, x0, nmExplore)
	x, v := fit.LBFGS(fg, xn, maxEvals)
	if x2, v2 := fit.LBFGS(fg, x0, maxEvals); v2 < v {
		return x2, v2
	}
	return x, v
}

// onTwoWorkers calls f(0) ... f(n-1) on two goroutines and returns when
// all are done; f must write only its own index's results.
func onTwoWorkers(n int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// activeParams lists the parameter indices the samples of p constrain:
// both curves and the launch cost always (the compute curve and the host
// floor instead with a host floor, hostFloorFit), the per-pair cost, the
// depth terms and the L2 speedup only when some sample has that structure.
func activeParams(p *prepared) []int {
	act := []int{0, 1, 2, 3, 4, 5, 6}
	if p.host {
		act = []int{0, 1, 2, 18}
	}
	if p.perSeq {
		act = append(act, 7)
	}
	if p.depth {
		act = append(act, 8, 9, 10, 11, 12)
	}
	if p.l2 {
		act = append(act, 13)
	}
	if p.expDepth {
		act = append(act, 14)
	}
	if p.tiles {
		act = append(act, 15, 16, 17)
	}
	return act
}

// medianLog is the fit's starting index of a curve's Half: the middle of
// the sorted non-zero values of v (the upper of the two middle ones for an
// even count), or 20 when v has none. It only places the start; the
// reported statistics use calibrate.Quantile.
func medianLog(v []float64) float64 {
	var nz []float64
	for _, x := range v {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	if len(nz) == 0 {
		return 20
	}
	sort.Float64s(nz)
	return nz[len(nz)/2]
}
