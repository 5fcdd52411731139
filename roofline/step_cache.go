package roofline

// tokenCache memoises the token-count-dependent part of a step's price,
// per token count and launch mode. Not safe for concurrent use.
type tokenCache struct {
	parts [2][]cachedPart
	// lm holds the LM head's step increments per sampled count.
	lm []lmIncrement
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
// 100 bytes per distinct count).
type CachedStep struct {
	m     *StepModel
	cache tokenCache
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

// DecodeCost prices a pure decode step of n requests whose KV lengths (each
// >= 1) sum to keySum, bit-identical to Cost on those lengths, in O(1). ok
// is false for models with sliding-window or chunked layers, whose price
// needs every length: use Cost then.
func (c *CachedStep) DecodeCost(n int, keySum int64) (cost StepCost, ok bool) {
	if c.m.nSliding > 0 || n <= 0 {
		return StepCost{}, false
	}
	var acc stepAcc
	c.m.evalAgg(stepAgg{sampled: n, requests: n, nDec: n, dKeysFull: float64(keySum)}, &acc, &c.cache)
	return acc.c, true
}
