package traces

// TokenRate counts output tokens in one-second buckets of wall (or
// simulated) time, the way vllm bench serve computes its
// max_output_tokens_per_s: bucket k holds the tokens that arrived in
// [origin + k s, origin + (k+1) s), where origin is the first request's
// send (arrival) time, and the metric is the fullest bucket.
//
// Memory is bounded: only the last TokenRateWindow buckets are kept, and a
// bucket that leaves the window is folded into the running maximum. Tokens
// are expected in time order (the simulator accounts them so; a client
// records each request's when it completes, at most its duration late);
// tokens older than the window are not counted and are reported by Late.
// The zero value is ready: call Start with the origin before the first Add.
type TokenRate struct {
	origin  int64 // ns
	started bool
	ring    []int64 // bucket k at ring[k % TokenRateWindow]
	head    int     // the newest bucket seen (-1: none)
	max     int64   // the fullest bucket that left the window
	late    int64
	// The last bucket added to and its time span [lo, hi) ns: tokens come
	// in time order, mostly into the same bucket, which then costs no
	// division.
	slot   int
	lo, hi int64
}

// TokenRateWindow is how many one-second buckets a TokenRate keeps: tokens
// may arrive up to this many seconds out of order.
const TokenRateWindow = 4096

// Start sets the origin (ns) if it is not set yet; later calls are ignored,
// so callers may call it on every arrival.
func (r *TokenRate) Start(originNS int64) {
	if !r.started {
		r.origin, r.started, r.head = originNS, true, -1
	}
}

// Add counts n tokens that arrived at tNS. Tokens before the origin (none,
// when the origin is the first send) are ignored, as vLLM ignores them.
func (r *TokenRate) Add(tNS int64, n int) {
	if !r.started || n <= 0 || tNS < r.origin {
		return
	}
	if tNS >= r.lo && tNS < r.hi {
		r.ring[r.slot] += int64(n)
		return
	}
	if r.ring == nil {
		r.ring = make([]int64, TokenRateWindow)
	}
	k := int((tNS - r.origin) / 1e9)
	if k > r.head {
		// Buckets head+1 .. k enter the window; the ones they replace leave.
		from := max(r.head+1, k-TokenRateWindow+1)
		for b := from; b <= k; b++ {
			j := b % TokenRateWindow
			r.max = max(r.max, r.ring[j])
			r.ring[j] = 0
		}
		r.head = k
	} else if k <= r.head-TokenRateWindow {
		r.late += int64(n)
		return
	}
	r.slot, r.lo, r.hi = k%TokenRateWindow, r.origin+int64(k)*1e9, r.origin+int64(k+1)*1e9
	r.ring[r.slot] += int64(n)
}

// Max returns the largest number of tokens in any one-second bucket
// (tokens/s), 0 before any token.
func (r *TokenRate) Max() float64 {
	m := r.max
	for _, b := range r.ring {
		m = max(m, b)
	}
	return float64(m)
}

// Late returns the tokens that arrived more than TokenRateWindow seconds
// behind the newest one, which Max does not count.
func (r *TokenRate) Late() int64 { return r.late }
