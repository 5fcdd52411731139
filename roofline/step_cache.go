package roofline

import (
	"math"

	"github.com/roofsim/roofsim/hardware"
)

// tokenCache memoises the token-count-dependent part of a step's price,
// per token count and launch mode. Not safe for concurrent use.
type tokenCache struct {
	parts [2][]cachedPart
	// lm holds the LM head's step increments per sampled count.
	lm []lmIncrement
	// lows holds lower bounds of efficiency curves (boundedTimes), one
	// table per curve; pows their anchored evaluations (curvePow).
	lows []*curveLows
	pows []*curvePow
}

// curveLows is a lower bound of a non-decreasing efficiency curve at 2^e for
// the binary exponents e of its argument (0: not computed yet).
type curveLows struct {
	curve hardware.Curve
	lo    [2048]float64
}

// curveLow returns a lower bound of cv.At(x) for every x' >= x's power of
// two, in particular for x: the curve's value at the power of two at or below
// x, less a relative 1e-12, far more than the rounding of its exp and log
// (the computed curve could otherwise dip a few ulps below it). Memoised per
// curve and binary exponent. 0 (no bound) when x is not a positive normal
// number or the curve is not non-decreasing (Exp < 0).
func (c *tokenCache) curveLow(cv hardware.Curve, x float64) float64 {
	return c.lowsFor(cv).at(x)
}

// lowsFor returns the table of lower bounds of cv, making it on first use.
func (c *tokenCache) lowsFor(cv hardware.Curve) *curveLows {
	for _, t := range c.lows {
		if t.curve == cv {
			return t
		}
	}
	t := &curveLows{curve: cv}
	c.lows = append(c.lows, t)
	return t
}

// at is curveLow for the table's curve.
func (t *curveLows) at(x float64) float64 {
	bits := math.Float64bits(x)
	exp := bits >> 52
	if exp == 0 || exp >= 2047 || t.curve.Exp < 0 {
		return 0 // zero, subnormal, negative, Inf or NaN; or a decreasing curve
	}
	lo := t.lo[exp]
	if lo == 0 {
		lo = t.curve.At(math.Float64frombits(exp<<52)) * (1 - 1e-12)
		t.lo[exp] = lo
	}
	return lo
}

// boundedTimes is opTimes for an attention operator, priced on every step,
// with fewer curve evaluations. Its price only needs the larger of the two
// times exactly and which one it is: the likely larger one (memory when
// memoryFirst) is computed exactly, and when a cheap upper bound of the
// other lies below it, the bound is returned in its place. apply then takes
// the same max and the same bound as with the exact value; otherwise both
// are exact. O(1) after the first call per curve and binary exponent.
func (m *StepModel) boundedTimes(c *Cost, pk *peak, e *hardware.OpEfficiency, cache *tokenCache, memoryFirst bool) (tc, tm float64) {
	f, b := c.FLOPs, c.Bytes()
	if !(f > 0 && b > 0) || e.Tiled() {
		return m.opTimes(c, pk, e)
	}
	// opTerms' and opTimes' expressions.
	exactTc := func() float64 { return f / (pk.flops * e.ComputeAt(f, c.M, c.N, c.K)) * m.computeScale }
	exactTm := func() float64 { return b / (m.bw * e.MemoryAt(b, c.Pairs)) }
	if memoryFirst {
		tm = exactTm()
		// The compute curve is non-decreasing, so ComputeAt(f) >= lo and the
		// exact tc, rounded the same way, is at most up.
		if lo := cache.curveLow(e.Compute, f); lo > 0 && e.DepthFactor(c.K) == 1 {
			if up := f / (pk.flops * lo) * m.computeScale; up < tm {
				return up, tm
			}
		}
		return exactTc(), tm
	}
	tc = exactTc()
	if lo := cache.curveLow(e.Memory, e.MemoryIndexOf(b, c.Pairs)); lo > 0 {
		if up := b / (m.bw * lo); up < tc {
			return tc, up
		}
	}
	return tc, exactTm()
}

// lmIncrement is what the LM head adds to a step for one sampled count:
// its time t (to ComputeS when computeBound, else MemoryS), FLOPs, bytes
// and roofline time. The launch is not included: it scales with the step's
// graph factor.
type lmIncrement struct {
	ok                        bool
	computeBound              bool
	t, flops, bytes, roofline float64
}

// lmHead returns the LM head's increments for sampled rows, computing them
// with f on first use.
func (c *tokenCache) lmHead(sampled int, f func() lmIncrement) lmIncrement {
	if sampled < len(c.lm) && c.lm[sampled].ok {
		return c.lm[sampled]
	}
	if sampled >= len(c.lm) {
		grown := make([]lmIncrement, max(sampled+1, 2*len(c.lm), 64))
		copy(grown, c.lm)
		c.lm = grown
	}
	inc := f()
	inc.ok = true
	c.lm[sampled] = inc
	return inc
}

type cachedPart struct {
	ok  bool
	acc stepAcc
}

func (c *tokenCache) get(T int, graph bool) (stepAcc, bool) {
	g := 0
	if graph {
		g = 1
	}
	if T < len(c.parts[g]) && c.parts[g][T].ok {
		return c.parts[g][T].acc, true
	}
	return stepAcc{}, false
}

func (c *tokenCache) put(T int, graph bool, a stepAcc) {
	g := 0
	if graph {
		g = 1
	}
	if T >= len(c.parts[g]) {
		n := max(T+1, 2*len(c.parts[g]), 256)
		grown := make([]cachedPart, n)
		copy(grown, c.parts[g])
		c.parts[g] = grown
	}
	a.ops = nil
	c.parts[g][T] = cachedPart{ok: true, acc: a}
}

// CachedStep prices steps exactly like its StepModel (bit-identical
// results) but memoises the part of each step's cost that depends only on
// its token count: projections, MLP, norms and all-reduces, which dominate
// the work of pricing a step. Use one per simulation: it is not safe for
// concurrent use. Memory grows with the largest token count seen (about
// 100 bytes per distinct count) and the largest decode batch priced by
// DecodeCost (about 100 bytes per request count).
type CachedStep struct {
	m     *StepModel
	cache tokenCache
	// dec[n] is what a pure decode step of n requests costs besides its
	// attention over the KV cache (DecodeCost).
	dec []decodeStep
	// decLows bounds decode attention's compute curve (DecodeCost).
	decLows *curveLows
	// decPow evaluates decode attention's memory curve (DecodeSecondsBound).
	decPow *curvePow
	// invBwMax is 1/(bandwidth x the memory curve's Max), scalePerPeak
	// computeScale / peak FLOP/s of decode attention (prepareBound).
	invBwMax, scalePerPeak float64
}

// binomialSeries returns binom(a, k) for k < n: the coefficients of
// (1+u)^a = sum_k binom(a, k) u^k.
func binomialSeries(a float64, n int) []float64 {
	c := make([]float64, n)
	c[0] = 1
	for k := 1; k < n; k++ {
		c[k] = c[k-1] * (a - float64(k-1)) / float64(k)
	}
	return c
}

// NewCachedStep wraps m.
func NewCachedStep(m *StepModel) *CachedStep { return &CachedStep{m: m} }

// Cost is m.Cost(in), memoised.
func (c *CachedStep) Cost(in *StepInput) StepCost {
	var acc stepAcc
	c.m.evalCached(in, &acc, &c.cache)
	return acc.c
}

// Model returns the wrapped step model.
func (c *CachedStep) Model() *StepModel { return c.m }

// decodeStep holds the terms of a pure decode step of n requests that do
// not depend on the KV lengths, each computed by the expression evalAgg
// uses, so that adding the attention term in evalAgg's order gives its
// result bit for bit.
type decodeStep struct {
	ok bool
	// c is the step's cost after the token-count operators (the cached
	// part at the captured size).
	c StepCost
	// attnLaunch is decode attention's launch time over its layers, seqS
	// its per-(request, KV head) time of one layer.
	attnLaunch, seqS float64
	// lm is the LM head's increment for n sampled rows and lmLaunch its
	// launch.
	lm       lmIncrement
	lmLaunch float64
	// over is the step's fixed, per-request and per-(request, KV head)
	// overhead.
	over float64
	// actBytes is decode attention's activation traffic (decodeAttention).
	actBytes float64
	// gpuBase and host are DecodeSecondsBound's: the GPU time besides the
	// attention layers' memory time, and the host time (prepareBound).
	boundReady    bool
	gpuBase, host float64
}

// curveAnchor is a point of an efficiency curve evaluated with exp and log
// (curvePow): g = (Half/x)^p at x, the power of two times a 7-bit mantissa
// whose bits, key, name it; inv = 1/x.
type curveAnchor struct {
	key    uint64
	g, inv float64
}

// anchorSlots is the number of anchors a curvePow keeps (a power of two),
// direct-mapped by their key: 16 octaves of work sizes at 128 anchors each.
const anchorSlots = 2048

// curvePow evaluates g(x) = (Half/x)^p of one efficiency curve, whose value
// is Max / (1 + g(x)) (Curve.At), without an exp or a log in most calls: g is
// evaluated exactly at anchors, the work sizes whose mantissa has 7 bits
// (memoised), and carried from the anchor below x, at a relative distance
// u < 2^-7, by the binomial series of (1+u)^-p, summed until its terms fall
// below 1e-17. With p <= 16 each term is at most 0.14 times the one before
// (|binom(-p, k+1) / binom(-p, k)| = (p+k)/(k+1) <= 17), so the rest of the
// series is smaller still. The error of g is then that of the anchor's exp
// and log and of a few dozen roundings, about 1e-14 relative, as for
// Curve.At's own value.
type curvePow struct {
	curve hardware.Curve
	p     float64
	binom []float64 // binom(-p, k)
	slots [anchorSlots]curveAnchor
}

// powFor returns the curvePow of cv, making it on first use; nil when cv is
// not one it can evaluate (Exp outside [0, 16], Max <= 0).
func (c *tokenCache) powFor(cv hardware.Curve) *curvePow {
	if cv.Exp < 0 || cv.Exp > 16 || !(cv.Max > 0) {
		return nil
	}
	for _, t := range c.pows {
		if t.curve == cv {
			return t
		}
	}
	p := cv.Exp
	if p == 0 {
		p = 1
	}
	t := &curvePow{curve: cv, p: p, binom: binomialSeries(-p, 64)}
	c.pows = append(c.pows, t)
	return t
}

// g returns (Half/x)^p for a positive normal x (0 for a curve without a
// knee), to about 1e-14 relative; false when x is not positive and normal,
// or when g >= 1e8 (the curve is near its floor, MinEfficiencyFraction).
func (t *curvePow) g(x float64) (float64, bool) {
	if t.curve.Half <= 0 {
		return 0, true
	}
	bits := math.Float64bits(x)
	if exp := bits >> 52; exp == 0 || exp >= 2047 {
		return 0, false
	}
	key := bits >> 45
	a := &t.slots[key&(anchorSlots-1)]
	x0 := math.Float64frombits(key << 45)
	if a.key != key || a.inv == 0 {
		*a = curveAnchor{key: key, g: math.Exp(t.p * math.Log(t.curve.Half/x0)), inv: 1 / x0}
	}
	u := (x - x0) * a.inv // in [0, 2^-7)
	sum, upow := 1.0, 1.0
	for k := 1; ; k++ {
		if k == len(t.binom) {
			return 0, false // not reached for u < 2^-7, p <= 16
		}
		upow *= u
		term := t.binom[k] * upow
		sum += term
		if math.Abs(term) <= 1e-17 {
			break
		}
	}
	g := a.g * sum
	return g, g < 1e8
}

// decodeStep returns the KV-independent terms for n decode requests,
// computing them on first use. n > 0.
func (c *CachedStep) decodeStep(n int) *decodeStep {
	if n < len(c.dec) && c.dec[n].ok {
		return &c.dec[n]
	}
	if n >= len(c.dec) {
		grown := make([]decodeStep, max(n+1, 2*len(c.dec), 64))
		copy(grown, c.dec)
		c.dec = grown
	}
	m, p := c.m, c.m.prof
	var acc stepAcc
	m.tokenPart(&acc, n, 0, &c.cache)
	d := decodeStep{ok: true, c: acc.c}
	e := &p.AttentionDecode
	d.attnLaunch = e.LaunchUS * 1e-6 * acc.launchScale * float64(m.nFull)
	d.seqS = e.SeqHeadSeconds(n * m.kvHeadsPG)
	d.lm = c.cache.lmHead(n, func() lmIncrement { return m.lmHeadIncrement(n) })
	d.lmLaunch = m.effLMH.LaunchUS * 1e-6 * acc.launchScale * 1
	d.over = m.stepOverhead(n)
	d.actBytes = decodeAttention(0, n, m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act).ActBytes
	c.dec[n] = d
	return &c.dec[n]
}

// DecodeCost prices a pure decode step of n requests whose KV lengths (each
// >= 1) sum to keySum, bit-identical to Cost on those lengths, in O(1): the
// terms that depend on n alone are memoised (decodeStep), and the attention
// term is added to them in evalAgg's order. ok is false for models with
// sliding-window or chunked layers, whose price needs every length, and
// for multi-head latent attention (mla.go): use Cost then.
func (c *CachedStep) DecodeCost(n int, keySum int64) (cost StepCost, ok bool) {
	m := c.m
	if m.nSliding > 0 || (m.hasStateMixers() || m.global.on) || m.mla != nil || n <= 0 {
		return StepCost{}, false
	}
	d := c.decodeStep(n)
	p := m.prof
	e := &p.AttentionDecode
	// evalAgg's seqOp for decode attention over the full-attention layers
	// (there are no sliding ones), then the LM head, the overheads and the
	// host time, in its order; FLOP, byte and roofline totals are not part
	// of a StepCost and are skipped.
	// decodeAttention's FLOPs and bytes, by its expressions (it has no GEMM
	// shape: M, N, K = 0), and boundedTimes on them without the Cost value.
	kf := float64(keySum)
	hd, kvh := float64(m.headDim), float64(m.kvHeadsPG)
	flops := 4 * float64(m.headsPG) * hd * kf
	bytes := d.actBytes + 2*kf*kvh*hd*m.kv.Bits/8
	cc := d.c
	if m.nFull > 0 && (flops > 0 || bytes > 0) {
		var tc, tm float64
		if flops > 0 && bytes > 0 && !e.Tiled() {
			tm = bytes / (m.bw * e.MemoryAt(bytes, n*m.kvHeadsPG))
			if c.decLows == nil {
				c.decLows = c.cache.lowsFor(e.Compute)
			}
			tc = flops / (m.pAct.flops * c.decLows.at(flops)) * m.computeScale
			if !(tc < tm) { // no bound (at = 0 gives +Inf), or not below: exact
				tc = flops / (m.pAct.flops * e.ComputeAt(flops, 0, 0, 0)) * m.computeScale
			}
		} else {
			ac := decodeAttention(kf, n, m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act)
			tc, tm = m.opTimes(&ac, &m.pAct, e)
		}
		t := (max(tc, tm) + d.seqS + m.inputScale*e.InputSeconds(0, 0) + e.OutputSeconds(0, 0)) * float64(m.nFull)
		if tc >= tm {
			cc.ComputeS += t
		} else {
			cc.MemoryS += t
		}
		cc.OverheadS += d.attnLaunch
	}
	return m.decodeTail(cc, d, n), true
}

// decodeTail adds the LM head, the overheads and the host time to a decode
// step's cost cc, in evalAgg's order, and totals it.
func (m *StepModel) decodeTail(cc StepCost, d *decodeStep, n int) StepCost {
	if d.lm.computeBound {
		cc.ComputeS += d.lm.t
	} else {
		cc.MemoryS += d.lm.t
	}
	cc.OverheadS += d.lmLaunch
	cc.OverheadS += d.over
	if host := m.eng.hostSeconds(n, cc.ComputeS+cc.MemoryS+cc.CommS+cc.OverheadS); host > 0 {
		cc.OverheadS += host
	}
	cc.Seconds = cc.ComputeS + cc.MemoryS + cc.CommS + cc.OverheadS
	return cc
}

// DecodeBoundRel is DecodeSecondsBound's error bound relative to the price:
// far above the rounding of either computation (about 1e-14 each; see
// DecodeSecondsBound).
const DecodeBoundRel = 1e-11

// DecodeSecondsBound returns s, an approximation of DecodeCost(n,
// keySum).Seconds, and err, a bound with |s - DecodeCost(n, keySum).Seconds|
// <= err (err = DecodeBoundRel * s), without an exp or a log in most calls.
// A caller that needs only a rounded price (the engine rounds a pass to whole
// nanoseconds) gets the exact one from it whenever no rounding boundary lies
// within err of s, and calls DecodeCost otherwise. ok is false where it does
// not apply: where DecodeCost refuses, on a tiled decode attention
// efficiency, or when decode attention is not memory-bound by a margin.
//
// Decode attention's memory time is bytes (1 + g) / (bandwidth Max) with
// g = (Half/x)^p (Curve.At) at the curve's index x, the bytes or the bytes
// per (request, KV head) pair (OpEfficiency.MemoryIndexOf), which curvePow evaluates to about 1e-14
// relative; the rest of the price is summed once per request count. The
// error of s is that and a few roundings, as for DecodeCost's own value.
func (c *CachedStep) DecodeSecondsBound(n int, keySum int64) (s, err float64, ok bool) {
	m := c.m
	e := &m.prof.AttentionDecode
	mc := e.Memory
	if c.decPow == nil {
		c.decPow = c.cache.powFor(mc)
	}
	if m.nSliding > 0 || (m.hasStateMixers() || m.global.on) || m.mla != nil || n <= 0 || m.nFull <= 0 || e.Tiled() || c.decPow == nil {
		return 0, 0, false
	}
	d := c.decodeStep(n)
	kf := float64(keySum)
	hd, kvh := float64(m.headDim), float64(m.kvHeadsPG)
	flops := 4 * float64(m.headsPG) * hd * kf
	bytes := d.actBytes + 2*kf*kvh*hd*m.kv.Bits/8
	if !(flops > 0 && bytes > 0) {
		return 0, 0, false
	}
	g, gok := c.decPow.g(e.MemoryIndexOf(bytes, n*m.kvHeadsPG))
	if !gok {
		return 0, 0, false
	}
	if !d.boundReady {
		c.prepareBound(d, n)
	}
	tm := bytes * (1 + g) * c.invBwMax
	// Memory-bound with a margin: the upper bound of the compute time that
	// DecodeCost uses, flops / (peak lo) * computeScale, lies below it
	// (compared without dividing; the margin covers the roundings).
	if !(flops*c.scalePerPeak < tm*c.decLows.at(flops)*(1-1e-9)) {
		return 0, 0, false
	}
	// DecodeCost's sum, reassociated (a few roundings of 1e-16 each): the
	// GPU time is the terms that do not depend on the KV sum plus the
	// attention layers' memory time; the host time adds what outlasts it
	// under async scheduling, else all of it.
	s = m.eng.hostAfter(d.gpuBase+tm*float64(m.nFull), d.host)
	return s, DecodeBoundRel * s, true
}

// prepareBound fills d's terms for DecodeSecondsBound: its price less the
// attention layers' memory time and the host, gpuBase, and the host time.
func (c *CachedStep) prepareBound(d *decodeStep, n int) {
	m := c.m
	p := m.prof
	cc := d.c
	cc.MemoryS += d.seqS * float64(m.nFull)
	cc.OverheadS += d.attnLaunch
	if d.lm.computeBound {
		cc.ComputeS += d.lm.t
	} else {
		cc.MemoryS += d.lm.t
	}
	cc.OverheadS += d.lmLaunch
	cc.OverheadS += d.over
	d.gpuBase = cc.ComputeS + cc.MemoryS + cc.CommS + cc.OverheadS
	d.host = m.eng.hostWorkSeconds(n)
	if c.decLows == nil {
		c.decLows = c.cache.lowsFor(p.AttentionDecode.Compute)
	}
	c.invBwMax = 1 / (m.bw * p.AttentionDecode.Memory.Max)
	c.scalePerPeak = m.computeScale / m.pAct.flops
	d.boundReady = true
}

// StepSecondsBound is DecodeSecondsBound for any step: s approximates
// Cost(in).Seconds with |s - Cost(in).Seconds| <= err = DecodeBoundRel * s.
// A step with prefill chunks has its attention kernels' bounding times
// carried by curvePow (prefill attention by compute, decode attention by
// memory) and the rest of evalAgg's sum reassociated. ok is false where it
// does not apply: models with sliding-window layers, tiled attention
// efficiencies, or an attention kernel not bound by a margin the way
// assumed. O(len(in.Prefills) + len(in.Decodes)).
func (c *CachedStep) StepSecondsBound(in *StepInput) (s, err float64, ok bool) {
	m := c.m
	if m.nSliding > 0 || (m.hasStateMixers() || m.global.on) || m.mla != nil || m.nFull <= 0 {
		return 0, 0, false
	}
	g := m.aggregate(in)
	if g.verifyTokens > 0 {
		return 0, 0, false // not derived for verify chunks
	}
	if g.prefTokens == 0 {
		if g.nDec == 0 {
			return 0, 0, false
		}
		return c.DecodeSecondsBound(g.nDec, int64(g.dKeysFull))
	}
	p := m.prof
	var acc stepAcc
	m.tokenPart(&acc, g.prefTokens+g.nDec, g.prefTokens, &c.cache)
	L := float64(m.nFull)
	gpu := acc.c.ComputeS + acc.c.MemoryS + acc.c.CommS + acc.c.OverheadS

	// Prefill attention, bound by compute.
	ep := &m.effPrefAttn
	pc := prefillAttention(g.pKeysFull, g.pReadFull, float64(g.prefTokens), m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act)
	pf, pb := pc.FLOPs, pc.Bytes()
	pp := c.cache.powFor(ep.Compute)
	if !(pf > 0 && pb > 0) || ep.Tiled() || pp == nil {
		return 0, 0, false
	}
	gc, gok := pp.g(pf)
	if !gok {
		return 0, 0, false
	}
	tc := pf * (1 + gc) / (m.pPrefAttn.flops * ep.Compute.Max) * m.computeScale
	if lo := c.cache.curveLow(ep.Memory, ep.MemoryIndexOf(pb, g.nPre*m.kvHeadsPG)); !(pb < tc*m.bw*lo*(1-1e-9)) {
		return 0, 0, false // not compute-bound by a margin (or no bound)
	}
	gpu += (tc+ep.SeqHeadSeconds(g.nPre*m.kvHeadsPG))*L + ep.LaunchUS*1e-6*acc.launchScale*L

	// Decode attention, bound by memory.
	if g.nDec > 0 {
		ed := &p.AttentionDecode
		dc := decodeAttention(g.dKeysFull, g.nDec, m.headsPG, m.kvHeadsPG, m.headDim, m.kv, m.act)
		df, db := dc.FLOPs, dc.Bytes()
		dp := c.cache.powFor(ed.Memory)
		if !(df > 0 && db > 0) || ed.Tiled() || dp == nil {
			return 0, 0, false
		}
		gm, gok := dp.g(ed.MemoryIndexOf(db, g.nDec*m.kvHeadsPG))
		if !gok {
			return 0, 0, false
		}
		tm := db * (1 + gm) / (m.bw * ed.Memory.Max)
		if lo := c.cache.curveLow(ed.Compute, df); !(df*m.computeScale < tm*m.pAct.flops*lo*(1-1e-9)) {
			return 0, 0, false // not memory-bound by a margin (or no bound)
		}
		gpu += (tm+ed.SeqHeadSeconds(g.nDec*m.kvHeadsPG))*L + ed.LaunchUS*1e-6*acc.launchScale*L
	}

	if g.sampled > 0 {
		inc := c.cache.lmHead(g.sampled, func() lmIncrement { return m.lmHeadIncrement(g.sampled) })
		gpu += inc.t + m.effLMH.LaunchUS*1e-6*acc.launchScale
	}
	gpu += m.stepOverhead(g.requests)
	s = m.eng.hostAfter(gpu, m.eng.hostWorkSeconds(g.requests))
	return s, DecodeBoundRel * s, true
}
