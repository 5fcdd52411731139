package workload

// Request is one inference request as the engine consumes it.
//
// The prompt's content identity, used for prefix caching, is given by Segments: the
// first Segments[0].Tokens prompt tokens are content Segments[0].Key, the next
// Segments[1].Tokens are content Segments[1].Key, and so on; prompt tokens after the last
// segment are unique to this request. A key names an unbounded token stream: two
// segments with the same key at the same position in their prompts agree on their first
// min(Tokens) tokens. That is how turns of one session share their history: turn k+1
// carries the same session key as turn k with a longer Tokens count.
//
// Segments may be shared between requests (all requests of one prefix group point at the
// same slice); consumers must treat it as read-only.
type Request struct {
	// ID is unique within a Generator and sequential in creation order, starting at 0.
	ID uint64
	// Client is the index of the issuing client in Spec.Clients (for traces, the index
	// of the client name in Trace.Clients, or 0).
	Client int
	// ArrivalNS is the simulated time, in nanoseconds, at which the request is sent.
	ArrivalNS int64
	// PromptTokens is the total prompt length in tokens, including any shared prefix.
	PromptTokens int
	// OutputTokens is the number of tokens to generate (>= 1).
	OutputTokens int
	// Priority is the client's priority (for the priority scheduling policy).
	Priority int
	// Segments describes the shared content at the start of the prompt; nil when none.
	Segments []Segment
	// SessionID identifies the multi-turn session, starting at 1; 0 when the request
	// belongs to no session.
	SessionID uint64
	// Turn is the 1-based turn number within the session; 0 outside sessions.
	Turn int
}

// Segment is a run of prompt tokens whose content is identified by Key.
type Segment struct {
	// Key identifies the content; equal keys mean equal tokens (see Request).
	Key uint64
	// Tokens is the length of the run in tokens (>= 1).
	Tokens int
}

// SharedPrefixTokens returns how many leading prompt tokens r shares with o by content,
// per the Segment semantics: segments are compared in order, equal keys share
// min(Tokens) tokens, and sharing stops at the first difference. It is a reference for
// consumers and tests; cost O(len(Segments)).
func (r *Request) SharedPrefixTokens(o *Request) int {
	n := 0
	for i := 0; i < len(r.Segments) && i < len(o.Segments); i++ {
		a, b := r.Segments[i], o.Segments[i]
		if a.Key != b.Key {
			break
		}
		n += min(a.Tokens, b.Tokens)
		if a.Tokens != b.Tokens {
			break
		}
	}
	return n
}
