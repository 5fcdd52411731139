package traces

// TokenRate counts output tokens in one-second buckets of wall (or
// simulated) time, the way vllm bench serve computes its
// max_output_tokens_per_s: bucket k holds the tokens that arrived in
// [origin + k s, origin + (k+1) s), where origin is the first request's
// send (arrival) time, and the metric is the fullest bucket. Memory is one
// counter per second of the run, not per token. The zero value is ready:
// call Start with the origin before the first Add.
type TokenRate struct {
	origin  int64 // ns
	started bool
	buckets []int64
	// The last bucket added to and its time span [lo, hi) ns: tokens come
	// in time order, mostly into the same bucket, which then costs no
	// division.
	last   int
	lo, hi int64
}

// Start sets the origin (ns) if it is not set yet; later calls are ignored,
// so callers may call it on every arrival.
func (r *TokenRate) Start(originNS int64) {
	if !r.started {
		r.origin, r.started = originNS, true
	}
}

// Add counts n tokens that arrived at tNS. Tokens before the origin (none,
// when the origin is the first send) are ignored, as vLLM ignores them.
func (r *TokenRate) Add(tNS int64, n int) {
	if !r.started || n <= 0 || tNS < r.origin {
		return
	}
	if tNS >= r.lo && tNS < r.hi {
		r.buckets[r.last] += int64(n)
		return
	}
	k := int((tNS - r.origin) / 1e9)
	r.last, r.lo, r.hi = k, r.origin+int64(k)*1e9, r.origin+int64(k+1)*1e9
	if k >= len(r.buckets) {
		if k >= cap(r.buckets) {
			grown := make([]int64, k+1, max(2*cap(r.buckets), k+1, 64))
			copy(grown, r.buckets)
			r.buckets = grown
		}
		r.buckets = r.buckets[:k+1]
	}
	r.buckets[k] += int64(n)
}

// Max returns the largest number of tokens in any one-second bucket
// (tokens/s), 0 before any token.
func (r *TokenRate) Max() float64 {
	var m int64
	for _, b := range r.buckets {
		m = max(m, b)
	}
	return float64(m)
}
