package scheduler

import "fmt"

// Remote KV: disaggregated prefill and decode (vLLM's KV connectors, NIXL in
// particular). A prefill instance runs a request with one output token and
// HoldBlocks set: when it finishes, its blocks stay allocated (stateHeld)
// until Release, as vLLM's NixlConnector delays freeing a finished prefill's
// blocks until the decode side has read them (request_finished returns
// delay_free_blocks; vllm/distributed/kv_transfer/kv_connector/v1/
// nixl_connector.py). A decode instance Reserves the blocks of a request
// whose KV is about to arrive (vLLM allocates them in schedule() before the
// request waits in WAITING_FOR_REMOTE_KVS), then AddLoaded queues it with
// that KV computed; its admission computes only the tokens after it.

// hold parks r, finished or being filled, outside both queues with its blocks.
func (s *Scheduler) hold(r *Request) {
	r.state = stateHeld
	r.heldAt = len(s.held)
	s.held = append(s.held, r)
}

// unhold removes r from the held set (O(1): the last one takes its place).
func (s *Scheduler) unhold(r *Request) {
	last := len(s.held) - 1
	s.held[r.heldAt] = s.held[last]
	s.held[r.heldAt].heldAt = r.heldAt
	s.held[last] = nil
	s.held = s.held[:last]
}

// Held is the number of requests holding KV blocks outside both queues: held
// after finishing (HoldBlocks) or reserved for a transfer. O(1).
func (s *Scheduler) Held() int { return len(s.held) }

// Release frees the blocks of a request that finished with HoldBlocks set
// (its full blocks stay in the prefix cache, as at any finish). It is an error
// for a request that is not held after finishing. O(blocks).
func (s *Scheduler) Release(r *Request) error {
	if r.state != stateHeld || r.loaded || r.NumOutput < r.OutputTokens {
		return fmt.Errorf("scheduler: Release of request %d, which is not held after finishing", r.ID)
	}
	s.unhold(r)
	s.freeBlocks(r)
	s.recycle(r)
	r.state = stateFinished
	return nil
}

// Reserve allocates the KV blocks for the first tokens tokens of r, whose KV
// another instance computed and is about to send: r is checked as Add checks
// it (a *RejectError when it can never be served here), then held with the
// blocks, outside both queues, until AddLoaded. ok is false, with nothing
// changed, when fewer blocks are free than it needs (the caller retries once
// blocks have been freed). 1 <= tokens <= r.PromptTokens. O(blocks).
func (s *Scheduler) Reserve(r *Request, tokens int) (ok bool, err error) {
	if r.state == stateWaiting || r.state == stateRunning || r.state == stateHeld {
		return false, fmt.Errorf("scheduler: request %d is already queued", r.ID)
	}
	covered, err := s.check(r)
	if err != nil {
		return false, err
	}
	if tokens < 1 || tokens > r.PromptTokens {
		return false, fmt.Errorf("scheduler: Reserve of %d tokens for request %d of %d prompt tokens", tokens, r.ID, r.PromptTokens)
	}
	need := s.blocksFor(tokens)
	if need > s.pool.numFree {
		return false, nil
	}
	s.reset(r, covered)
	r.blocks = takeSlice(&s.blockSlices)
	s.allocate(r, need)
	s.hold(r)
	return true, nil
}

// AddLoaded queues a request that Reserve holds, whose KV for its first
// computed tokens has arrived. Such requests are admitted in the order they
// were loaded, before the other waiting requests: they hold their blocks
// already, so a waiting request that cannot get blocks (a preempted one
// recomputing) never stalls them, and they free blocks as they finish. Its
// admission computes only the tokens after those (vLLM recomputes the last prompt token
// of a fully transferred prompt to sample the first output, so computed is
// then PromptTokens-1: _update_waiting_for_remote_kv in
// vllm/v1/core/sched/scheduler.py). It needs no prefix-cache lookup; the
// loaded blocks are offered to the prefix cache as they are at any
// computation. O(1) (O(log n) for ordered policies).
func (s *Scheduler) AddLoaded(r *Request, computed int) error {
	if r.state != stateHeld || r.NumOutput != 0 || r.loaded {
		return fmt.Errorf("scheduler: AddLoaded of request %d, which Reserve does not hold", r.ID)
	}
	if computed < 0 || computed >= r.PromptTokens || s.blocksFor(computed) > len(r.blocks) {
		return fmt.Errorf("scheduler: AddLoaded of request %d with %d tokens computed, %d blocks reserved for a %d-token prompt", r.ID, computed, len(r.blocks), r.PromptTokens)
	}
	s.unhold(r)
	r.NumComputed = computed
	r.loaded = true
	r.state = stateWaiting
	s.loadedQ.Push(r)
	return nil
}

// FreeBlocks is the number of KV blocks not held by any request (those
// holding reusable prefix-cache content included). O(1).
func (s *Scheduler) FreeBlocks() int { return s.pool.numFree }

// Check returns the *RejectError Add would return for r (it can never be
// served here), else nil; r is not changed. O(segments).
func (s *Scheduler) Check(r *Request) error {
	_, err := s.check(r)
	return err
}
