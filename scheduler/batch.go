package scheduler

// Scheduled is one request's share of a step.
type Scheduled struct {
	// Req is the request; its state fields describe it before the step until Commit.
	Req *Request
	// Tokens is the number of new tokens computed for Req in this step (>= 1).
	Tokens int
	// Context is the number of Req's tokens already in the KV cache before this step,
	// prefix-cache hits included: attention covers Context+Tokens positions.
	Context int
	// Prefill is true for a (possibly partial) prompt chunk, including the recompute
	// of prompt+generated tokens after a preemption; false for a one-token decode.
	Prefill bool
	// Sampled is true when this step produces an output token for Req: the chunk that
	// completes the prompt (or the recompute) and every decode.
	Sampled bool
	// Accepted is, for a speculative verify item (Drafts() > 0), how many of
	// its drafts the target accepted: the caller sets it between Schedule and
	// Commit, in [0, Drafts()] and below the request's outputs left, and the
	// request then gains 1+Accepted output tokens (speculative.go).
	Accepted int
}

// Batch is one step's work. It and its slices are owned by the Scheduler and valid
// until the next Schedule call.
type Batch struct {
	// Items lists the scheduled requests: running requests in admission order, then
	// newly admitted ones.
	Items []Scheduled
	// NumTokens is the sum of Items[i].Tokens (<= Config.MaxNumBatchedTokens).
	NumTokens int
	// NumPrefillTokens is the sum of Tokens over prefill items.
	NumPrefillTokens int
	// NumDecodes is the number of decode items (one token each, or with
	// speculative decoding the last token and its drafts).
	NumDecodes int
	// Preempted lists the requests preempted while forming this batch; they are back
	// in the waiting queue and are not in Items.
	Preempted []*Request
	// ReloadBlocks is the number of KV blocks newly admitted requests load back
	// from the CPU tier in this step (offload.go); the engine prices the copy.
	ReloadBlocks int
	// Admitted is the number of items, at the end of Items, whose requests
	// this step admitted from the waiting queue (new, or back after a
	// preemption); the items before them were running already.
	Admitted int
}

// reset empties b for the next Schedule, which fills Items afresh; the
// caller clears the entries the new batch does not reach (clearFrom), so
// finished requests are not pinned, without clearing the rest twice.
func (b *Batch) reset() {
	b.Items = b.Items[:0]
	clear(b.Preempted)
	b.Preempted = b.Preempted[:0]
	b.NumTokens, b.NumPrefillTokens, b.NumDecodes, b.ReloadBlocks, b.Admitted = 0, 0, 0, 0, 0
}

// clearFrom zeroes the entries of Items's array from len(Items) up to stale
// (the previous batch's length), dropping their request pointers. O(stale -
// len(Items)).
func (b *Batch) clearFrom(stale int) {
	if n := len(b.Items); stale > n {
		clear(b.Items[n:stale])
	}
}
