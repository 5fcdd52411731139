package roofline

// This file prices decode runs: a batch of requests that only decode,
// pass after pass, each pass adding one token to every live request's KV
// cache, until the request has produced its tokens. A simulator fast-
// forwarding through such a run prices every pass; DecodeRunPricer does so
// in O(1) a pass where the model allows it (DecodeCost), with results bit
// for bit those of pricing each pass on its own (ReferenceDecodeRun).

// Pricer prices one forward pass (StepModel and CachedStep do).
type Pricer interface {
	Cost(in *StepInput) StepCost
}

var (
	_ Pricer = (*StepModel)(nil)
	_ Pricer = (*CachedStep)(nil)
)

// DecodeRun is a run of decode passes over one batch: request k attends to
// Lengths[k] keys in pass 1 (its new token included) and decodes in passes
// 1 to Passes[k]. In pass j the requests with Passes[k] >= j decode, with
// Lengths[k] + j - 1 keys each.
type DecodeRun struct {
	Lengths, Passes []int
}

// PassDecodes appends pass j's KV lengths to dst, in request order: the
// definition of a pass. O(len(r.Lengths)).
func (r DecodeRun) PassDecodes(j int, dst []int) []int {
	for k, l := range r.Lengths {
		if r.Passes[k] >= j {
			dst = append(dst, l+j-1)
		}
	}
	return dst
}

// ReferenceDecodeRun prices passes 1 to passes of r one at a time, each
// with the plain per-pass cost m.Cost on its KV lengths: the definition
// that DecodeRunPricer must match bit for bit. O(passes x len(r.Lengths)).
func ReferenceDecodeRun(m Pricer, r DecodeRun, passes int) []StepCost {
	out := make([]StepCost, 0, passes)
	for j := 1; j <= passes; j++ {
		in := StepInput{Decodes: r.PassDecodes(j, nil)}
		out = append(out, m.Cost(&in))
	}
	return out
}

// DecodeRunPricer prices the passes of decode runs for one Pricer. With a
// CachedStep, a pass is priced from its request count and KV-length sum in
// O(1) (DecodeCost); otherwise, or for models DecodeCost refuses (sliding-
// window layers), from its KV lengths. Either way the price is pass j of
// ReferenceDecodeRun, bit for bit. Not safe for concurrent use; reuse one
// across runs (it keeps its buffer).
//
// A caller that needs only a pass's duration rounded to whole nanoseconds
// may first try the cheaper CachedStep.DecodeSecondsBound, which returns
// the same price to within a stated error, and call Pass where that error
// straddles a rounding boundary.
type DecodeRunPricer struct {
	m  Pricer
	dc *CachedStep // m as a CachedStep, or nil
	in StepInput   // scratch pass
}

// NewDecodeRunPricer returns a decode-run pricer for m.
func NewDecodeRunPricer(m Pricer) *DecodeRunPricer {
	dc, _ := m.(*CachedStep)
	return &DecodeRunPricer{m: m, dc: dc}
}

// Step prices the step in, bit for bit as Cost does: a pure decode step
// from its request count and KV-length sum (each length at least 1) where
// DecodeCost applies, else with Cost. O(len(in.Decodes)) to sum the
// lengths, then O(1) where DecodeCost applies.
func (p *DecodeRunPricer) Step(in *StepInput) StepCost {
	if p.dc != nil && len(in.Prefills) == 0 && len(in.Verifies) == 0 && len(in.Decodes) > 0 {
		var sum int64
		for _, l := range in.Decodes {
			sum += int64(max(l, 1))
		}
		if c, ok := p.dc.DecodeCost(len(in.Decodes), sum); ok {
			return c
		}
	}
	return p.m.Cost(in)
}

// Pass prices pass j >= 1 of r, in which n requests are live with KV lengths
// summing to keySum (the caller keeps both as the run advances; they must
// be pass j's). O(1) when DecodeCost applies, else O(len(r.Lengths)) and no
// allocation once the buffer has grown to the batch.
func (p *DecodeRunPricer) Pass(r DecodeRun, j, n int, keySum int64) StepCost {
	if p.dc != nil {
		if c, ok := p.dc.DecodeCost(n, keySum); ok {
			return c
		}
	}
	p.in.Decodes = r.PassDecodes(j, p.in.Decodes[:0])
	return p.m.Cost(&p.in)
}
