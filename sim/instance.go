package sim

import (
	"fmt"

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
	d := FromSeconds(in.cost.Seconds)
	if d < 1 {
		d = 1 // time always moves forward
	}
	in.busy = true
	in.stepStart = e.now
	e.q.push(event{at: e.now + d, kind: evStepDone, replica: int32(in.id)})
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
	gap := float64(e.now-in.lastStepEnd) / 1e9
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
			r.firstTok = e.now
		} else if in.hadStep && r.lastTok == in.lastStepEnd {
			// The common case: a token in the previous step too, so the gap is
			// this step's wall time; pooled per client below.
			e.itlCounts[e.clientIndex(r.w.Client)]++
		} else {
			e.col.AddITL(r.w.Client, float64(e.now-r.lastTok)/1e9)
		}
		r.lastTok = e.now
	}
	for c, n := range e.itlCounts {
		if n > 0 {
			e.col.AddITLN(c, gap, n)
		}
	}
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
