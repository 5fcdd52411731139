package sim

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
)

// instance is one serving engine: a scheduler that forms batches and a step
// model that prices them. It runs forward passes back to back while it has
// work and sleeps otherwise.
type instance struct {
	id          int
	sched       *scheduler.Scheduler
	busy        bool // a forward pass is in progress
	wakePending bool // an evWake is queued
	batch       *scheduler.Batch
	stepStart   Time
	lastStepEnd Time // end of this instance's previous forward pass
	hadStep     bool
	cost        roofline.StepCost
	in          roofline.StepInput
	finished    []*scheduler.Request
	outstanding int // requests routed here and not yet finished
	// scratch for fastForward
	durs         []Time
	costs        []roofline.StepCost
	clientCounts []int
}

// startStep forms the next batch and schedules its completion; with nothing
// runnable the instance goes idle until the next arrival.
func (e *engine) startStep(in *instance) {
	b := in.sched.Schedule()
	if b == nil || len(b.Items) == 0 {
		in.busy = false
		return
	}
	in.batch = b
	in.in.Prefills = in.in.Prefills[:0]
	in.in.Decodes = in.in.Decodes[:0]
	for k := range b.Items {
		it := &b.Items[k]
		r := e.table[it.Req.Index]
		if !r.hasSched {
			r.hasSched = true
			r.firstSched = e.now
		}
		if it.Prefill {
			in.in.Prefills = append(in.in.Prefills, roofline.Chunk{Tokens: it.Tokens, Cached: it.Context, Sampled: it.Sampled})
		} else {
			in.in.Decodes = append(in.in.Decodes, it.Context+it.Tokens)
		}
	}
	in.cost = e.cfg.StepModel.Cost(&in.in)
	d := stepDuration(in.cost)
	in.busy = true
	in.stepStart = e.now
	if !e.cfg.StepTrace && !e.cfg.NoFastForward {
		if m := in.sched.FastForwardLimit(); m >= 2 {
			e.fastForward(in, b, m, d)
			return
		}
	}
	e.q.push(event{at: e.now + d, kind: evStepDone, replica: int32(in.id)})
}

// stepDuration rounds a step's cost to whole nanoseconds; time always moves
// forward by at least 1 ns.
func stepDuration(c roofline.StepCost) Time {
	return max(FromSeconds(c.Seconds), 1)
}

// finishStep applies a completed forward pass: output tokens, ITL samples,
// finished requests, the step record; then wakes the instance again.
func (e *engine) finishStep(in *instance) error {
	b := in.batch
	e.res.Steps++
	in.finished = in.sched.Commit(b, in.finished[:0])
	if e.cfg.CheckInvariants {
		if err := in.sched.CheckInvariants(); err != nil {
			return fmt.Errorf("replica %d after step %d at %v s: %w", in.id, e.res.Steps, e.now.Seconds(), err)
		}
	}
	e.emitTokens(in, b, e.now)
	st := in.sched.Stats()
	if st.KVBlocksUsed > e.res.KVBlocksPeak {
		e.res.KVBlocksPeak = st.KVBlocksUsed
	}
	if e.cfg.StepTrace {
		e.step.Replica = in.id
		e.step.TimeS = in.stepStart.Seconds()
		e.step.DurationS = (e.now - in.stepStart).Seconds()
		e.step.PrefillTokens = b.NumPrefillTokens
		e.step.DecodeRequests = b.NumDecodes
		e.step.BatchSize = len(b.Items)
		e.step.KVBlocksUsed = st.KVBlocksUsed
		e.step.KVBlocksTotal = st.KVBlocksTotal
		e.step.ComputeS = in.cost.ComputeS
		e.step.MemoryS = in.cost.MemoryS
		e.step.CommS = in.cost.CommS
		e.step.OverheadS = in.cost.OverheadS
		e.step.Preempted = len(b.Preempted)
		if err := e.sink.Step(&e.step); err != nil {
			return fmt.Errorf("writing step record: %w", err)
		}
	}
	in.lastStepEnd = e.now
	in.hadStep = true
	in.busy = false
	for _, sr := range in.finished {
		i := int32(sr.Index)
		e.res.Completed++
		e.res.OutputTokensCompleted += int64(sr.OutputTokens)
		in.outstanding--
		if err := e.finish(i, "ok"); err != nil {
			return err
		}
	}
	if in.sched.HasWork() && !in.wakePending {
		in.wakePending = true
		e.q.push(event{at: e.now, kind: evWake, replica: int32(in.id)})
	}
	return nil
}

func (e *engine) clientIndex(c int) int {
	if c >= 0 && c < len(e.itlCounts) {
		return c
	}
	return 0
}

// emitTokens records the output tokens the step b produced at time t: first
// tokens, inter-token gaps (pooled per client when a request also had a
// token in the instance's previous step, the common case), token counts.
func (e *engine) emitTokens(in *instance, b *scheduler.Batch, t Time) {
	gap := float64(t-in.lastStepEnd) / 1e9
	for c := range e.itlCounts {
		e.itlCounts[c] = 0
	}
	for k := range b.Items {
		it := &b.Items[k]
		if !it.Sampled {
			continue
		}
		e.res.OutputTokensGenerated++
		r := e.table[it.Req.Index]
		if !r.hasTok {
			r.hasTok = true
			r.firstTok = t
		} else if in.hadStep && r.lastTok == in.lastStepEnd {
			e.itlCounts[r.client]++
		} else {
			e.col.AddITL(r.w.Client, float64(t-r.lastTok)/1e9)
		}
		r.lastTok = t
	}
	for c, n := range e.itlCounts {
		if n > 0 {
			e.col.AddITLN(c, gap, n)
		}
	}
}

// fastForward runs a stretch of pure decode steps (at most m, the pending
// one first, whose cost is d1) in one go: as many as end before the next
// queued event (and the horizon), so nothing could have interleaved with
// them. Results are identical to stepping one at a time; only the engine's
// per-step bookkeeping is skipped. The last step stays pending as usual.
func (e *engine) fastForward(in *instance, b *scheduler.Batch, m int, d1 Time) {
	limit := Time(math.MaxInt64)
	if e.q.len() > 0 {
		limit = e.q.h[0].at - 1
	}
	if e.cfg.Horizon > 0 {
		limit = min(limit, e.cfg.Horizon)
	}
	in.durs = append(in.durs[:0], d1)
	in.costs = append(in.costs[:0], in.cost)
	t := e.now + d1
	if t > limit {
		e.q.push(event{at: e.now + d1, kind: evStepDone, replica: int32(in.id)})
		return
	}
	for j := 2; j <= m; j++ {
		for i := range in.in.Decodes {
			in.in.Decodes[i]++
		}
		c := e.cfg.StepModel.Cost(&in.in)
		d := stepDuration(c)
		if t+d > limit {
			break
		}
		t += d
		in.durs = append(in.durs, d)
		in.costs = append(in.costs, c)
	}
	k := len(in.durs)
	if k > 1 {
		var peak int
		k, peak = in.sched.FastForward(k)
		e.res.KVBlocksPeak = max(e.res.KVBlocksPeak, peak)
	}
	// Steps 1..k-1 complete here; step k is left pending.
	start := e.now
	for j := 0; j < k-1; j++ {
		end := start + in.durs[j]
		if j == 0 {
			e.emitTokens(in, b, end)
		} else {
			n := len(b.Items)
			e.res.OutputTokensGenerated += int64(n)
			gap := in.durs[j].Seconds()
			for c, cnt := range in.clientCounts {
				if cnt > 0 {
					e.col.AddITLN(c, gap, cnt)
				}
			}
		}
		if j == 0 {
			// Every item is a decode of a request in every later step: count
			// them per client once.
			in.clientCounts = in.clientCounts[:0]
			for range e.itlCounts {
				in.clientCounts = append(in.clientCounts, 0)
			}
			for i := range b.Items {
				in.clientCounts[e.table[b.Items[i].Req.Index].client]++
			}
		}
		in.lastStepEnd = end
		in.hadStep = true
		e.res.Steps++
		start = end
	}
	if k > 1 {
		for i := range b.Items {
			e.table[b.Items[i].Req.Index].lastTok = start
		}
	}
	in.cost = in.costs[k-1]
	in.stepStart = start
	e.q.push(event{at: start + in.durs[k-1], kind: evStepDone, replica: int32(in.id)})
}
