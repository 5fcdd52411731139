package scheduler

import "fmt"

// Speculation configures speculative decoding as vLLM v1's scheduler runs
// it (vllm/v1/core/sched/scheduler.py): a running request past its prompt
// schedules its last sampled token plus NumTokens draft tokens (fewer when
// the token budget is short), and its KV blocks cover LookaheadTokens more
// slots beyond them (num_lookahead_tokens: the draft network's own next
// drafts; 0 for n-gram lookup). The caller sets each verify item's
// Accepted before Commit; the request then computes and gains 1+Accepted
// tokens, and the slots of rejected drafts stay allocated (vLLM lowers
// num_computed_tokens and keeps the blocks). Blocks are registered in the
// prefix cache only up to the request's known tokens, never over drafts.
type Speculation struct {
	// NumTokens is the number of draft tokens per verify (0: off).
	NumTokens int
	// LookaheadTokens is the number of KV slots reserved beyond the
	// scheduled tokens of every running request.
	LookaheadTokens int
}

// MaxSpeculativeTokens bounds Speculation.NumTokens and LookaheadTokens.
const MaxSpeculativeTokens = 64

// check reports invalid fields to bad.
func (sp Speculation) check(bad func(field, format string, args ...any)) {
	if sp.NumTokens < 0 || sp.NumTokens > MaxSpeculativeTokens {
		bad("speculative.num_speculative_tokens", "must be in [0, %d], got %d", MaxSpeculativeTokens, sp.NumTokens)
	}
	if sp.LookaheadTokens < 0 || sp.LookaheadTokens > MaxSpeculativeTokens {
		bad("speculative.lookahead_tokens", "must be in [0, %d], got %d", MaxSpeculativeTokens, sp.LookaheadTokens)
	}
}

// speculate returns a running request's tokens for this step and the new
// blocks they need, with speculation on: a decode (past its prompt)
// carries its drafts, min(1+NumTokens, budget) tokens in all and at most
// up to position MaxModelLen-1 (vLLM's cap), and every running request
// reserves LookaheadTokens slots (admit reserves them too). n is the tokens it would take without
// speculation (already capped by budget).
func (s *Scheduler) speculate(r *Request, n, budget int) (int, int) {
	sp := s.cfg.Speculative
	if r.NumComputed >= r.prefillEnd && n == r.knownTokens()-r.NumComputed {
		n = min(n+sp.NumTokens, budget, max(s.cfg.MaxModelLen-1-r.NumComputed, n))
	}
	need := s.blocksFor(r.NumComputed+n+sp.LookaheadTokens) - len(r.blocks)
	return n, max(need, 0)
}

// Drafts is the number of draft tokens a decode item verifies: Tokens-1
// for a decode with speculation on, 0 otherwise.
func (it *Scheduled) Drafts() int {
	if it.Prefill || it.Tokens <= 1 {
		return 0
	}
	return it.Tokens - 1
}

// verified returns the tokens a verify item computed and sampled: its
// last sampled token and the accepted drafts, 1+Accepted of each. An
// Accepted outside [0, Drafts()] or reaching past the request's outputs is
// a broken caller invariant and panics.
func (s *Scheduler) verified(it *Scheduled) (computed, sampled int) {
	r := it.Req
	if it.Accepted < 0 || it.Accepted > it.Drafts() || r.NumOutput+1+it.Accepted > r.OutputTokens {
		panic(fmt.Sprintf("scheduler: request %d: %d accepted of %d drafts with %d of %d outputs done", r.ID, it.Accepted, it.Drafts(), r.NumOutput, r.OutputTokens))
	}
	return 1 + it.Accepted, 1 + it.Accepted
}
