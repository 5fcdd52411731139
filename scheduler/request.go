package scheduler

import "fmt"

// Segment is a run of prompt tokens whose content is identified by Key: token i of the
// segment (0-based offset i) has content identity (Key, i). Two requests share a
// KV-cache block iff every token position up to the end of that block has the same
// identity in both (see prefix_cache.go).
type Segment struct {
	// Key identifies the content stream.
	Key uint64
	// Tokens is the run's length in tokens (>= 1).
	Tokens int
}

// reqState is where a request is in its life cycle.
type reqState uint8

const (
	stateNew reqState = iota
	stateWaiting
	stateRunning
	stateFinished
	// stateHeld: out of both queues but holding KV blocks (remote_kv.go): a
	// finished request whose blocks wait for a transfer, or one whose blocks
	// are being filled by one.
	stateHeld
)

// Request is one inference request as the scheduler sees it. The caller fills the
// exported input fields before Add and must not change them (nor the Segments slice)
// until the request finishes; the scheduler maintains the state fields, which callers
// may read.
type Request struct {
	// ID identifies the request; it also makes the content of tokens outside Segments
	// unique to this request, so IDs of requests in flight must be distinct.
	ID uint64
	// Seq is the arrival order, used to break ties by the priority and sjf policies.
	Seq uint64
	// Priority orders the "priority" policy: lower values are served first.
	Priority int
	// PromptTokens is the prompt length in tokens (>= 1).
	PromptTokens int
	// OutputTokens is the number of tokens generated: exactly this many (no early stop).
	OutputTokens int
	// Segments gives the content identity of the prompt's leading tokens (their total
	// must not exceed PromptTokens); later prompt tokens are unique to the request. If
	// the segments cover the whole prompt, the output tokens continue the last segment
	// (see prefix_cache.go), which is how a session's next turn hits this turn's
	// prompt and output. Read-only; may be shared between requests.
	Segments []Segment
	// Index is opaque to the scheduler: engine bookkeeping.
	Index int

	// NumComputed is the number of tokens (prompt, then generated) whose KV is
	// computed, prefix-cache hits included. Maintained by the scheduler.
	NumComputed int
	// NumOutput is the number of output tokens generated so far. Maintained by the
	// scheduler.
	NumOutput int
	// NumCached is the number of tokens served from the prefix cache at the latest
	// admission (a preempted request is re-admitted and looked up again).
	NumCached int
	// Preemptions counts how often the request was preempted.
	Preemptions int
	// HoldBlocks keeps the request's KV blocks when it finishes, until
	// Release (a prefill instance holds them until their transfer to the
	// decode instance completes; see remote_kv.go).
	HoldBlocks bool

	state reqState
	// prefillEnd is the number of known tokens at the latest admission: tokens below
	// it are (re)computed as prefill, later ones as decodes.
	prefillEnd int
	// blocks are the KV blocks held, in token order; len == ceil(NumComputed/BlockSize)
	// between steps.
	blocks []int32
	// stateBlocks are the blocks held for the recurrent state while running
	// (Scheduler.SetStateBlocksPerRequest's count; none while waiting).
	stateBlocks []int32
	// winBlocks are the sliding-window groups' blocks held while running,
	// oldest first (window_blocks.go); with one full group, position-major:
	// window block winFirst+k of group g is winBlocks[k*Groups+g].
	winBlocks []int32
	// winFirst is the window block index of winBlocks[0]; winRegistered
	// how many leading window blocks were offered to the prefix cache
	// (window_prefix.go).
	winFirst, winRegistered int
	// winHashes is r's hash chain at the window groups' block size when it
	// differs from the full groups' (hashes otherwise); winHashSeg and
	// winHashOff locate its end in the segments.
	winHashes              []uint64
	winHashSeg, winHashOff int
	// hashes[i] is the content hash of full block i (computed lazily, kept across
	// preemptions since content never changes).
	hashes []uint64
	// hashSeg and hashOff locate token position len(hashes)*BlockSize in the segments.
	hashSeg, hashOff int
	// extend is true when the segments cover the whole prompt, so the output tokens
	// continue the last segment's content.
	extend bool
	// shared caches sharedTokens(): positions whose content segments name.
	shared int
	// numRegistered is how many leading blocks have been offered to the prefix cache.
	numRegistered int
	// loaded is true from AddLoaded to admission: NumComputed tokens' KV came
	// from another instance into the blocks held (remote_kv.go).
	loaded bool
	// heldAt is the request's index in Scheduler.held while it is held.
	heldAt int
}

// knownTokens is the number of tokens whose identity is known: the prompt and the
// outputs generated so far.
func (r *Request) knownTokens() int { return r.PromptTokens + r.NumOutput }

// Reasons given by RejectError.
const (
	// ReasonPromptTooLong: PromptTokens+OutputTokens exceeds Config.MaxModelLen.
	ReasonPromptTooLong = "prompt_too_long"
	// ReasonExceedsKVCapacity: the request alone needs more KV blocks than exist.
	ReasonExceedsKVCapacity = "exceeds_kv_capacity"
	// ReasonInvalid: the request's fields are malformed (non-positive lengths,
	// segments longer than the prompt).
	ReasonInvalid = "invalid_request"
)

// RejectError is returned by Add for a request that can never be served.
type RejectError struct {
	// ID is the rejected request's ID.
	ID uint64
	// Reason is one of the Reason* constants.
	Reason string
	// Detail explains the reason with the numbers involved.
	Detail string
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("request %d rejected: %s: %s", e.ID, e.Reason, e.Detail)
}
