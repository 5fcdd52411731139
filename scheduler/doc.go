// Package scheduler forms the batches of a vLLM (v1 engine) -like inference server:
// a waiting queue ordered by a policy, a running set in admission order, a per-step
// token budget, a cap on concurrent sequences, chunked prefill, a paged KV-cache block
// manager with automatic prefix caching, and preemption by recomputation.
//
// The package is time-agnostic: it never sees wall-clock or virtual time. The caller
// (the simulator engine) drives it as a state machine:
//
//	s, _ := scheduler.New(cfg)
//	s.Add(req)                        // on arrival
//	b := s.Schedule()                 // form the next step's batch (nil: nothing to run)
//	... price the step, advance time ...
//	finished = s.Commit(b, finished[:0]) // apply the step
//
// Between arrivals, a pure decode step over the whole running set may instead be
// committed together with the decode steps that follow it ([Scheduler.DecodeRunLimit],
// [Scheduler.AdvanceDecodes]), with the same results as stepping.
//
// Reading order:
//   - config.go: [Config], [DefaultConfig], [Config.Validate].
//   - request.go: [Request], [Segment] (prefix-cache content identity), [RejectError].
//   - batch.go: [Batch] and [Scheduled], what one step computes.
//   - kvcache.go: the fixed block pool, reference counts and the LRU free queue (cached
//     blocks in order, interchangeable plain blocks only counted between them).
//   - prefix_cache.go: block content hashes, prefix lookup and registration.
//   - policy.go: the table of waiting-queue policies (fcfs, priority, sjf).
//   - scheduler.go: [Scheduler], [New], [Scheduler.Add], [Scheduler.Stats].
//   - schedule.go: [Scheduler.Schedule] (running requests, then admission), preemption.
//   - commit.go: [Scheduler.Commit] and advance, the one place a step's tokens and
//     completions are accounted.
//   - decode_run.go: [Scheduler.AdvanceDecodes], a run of pure decode steps committed
//     in one call with Commit's and Schedule's primitives, in O(events).
//   - invariants.go: [Scheduler.CheckInvariants] for tests.
//
// Token accounting follows vLLM v1. A request "knows" PromptTokens+NumOutput tokens;
// NumComputed of them have their KV in the cache. Each step computes
// min(known-NumComputed, budget left) tokens for it; the step that computes the last
// known token samples the next output token (Scheduled.Sampled). Output token k
// (1-based) therefore enters the KV cache only in the step that samples token k+1, so a
// finished request has computed PromptTokens+OutputTokens-1 tokens.
//
// Per-step cost is O(running + admitted + preempted) with no allocation in steady
// state: queues and batches are slices reused across steps, KV usage is kept as
// running counts, and a block's content hash is computed once, when it is first needed,
// in O(segment runs in the block).
package scheduler
