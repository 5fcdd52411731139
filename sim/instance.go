package sim

import (
	"fmt"
	"math"
	"slices"

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
	rem          []int
	byRem        []int32
	live         []int
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
		if m := in.sched.FastForwardLimit(); m >= 2 || m == 1 && !e.followUps {
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
		if err := e.finish(i, "ok", e.now); err != nil {
			return err
		}
	}
	if in.sched.HasWork() && !in.wakePending {
		if e.q.len() == 0 || e.q.h[0].at > e.now {
			// Nothing else happens at this instant: the wake would be the next
			// event popped, so start the next step now.
			e.startStep(in)
			return e.err
		}
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

// fastForward runs a stretch of pure decode steps (the pending one, whose
// duration is d1, first) in one go: as many as end before the next queued
// event and the horizon, so nothing could have interleaved with them.
// Requests that finish along the way are completed at their own step's end.
// When finishing could create work (closed-loop or session follow-ups), the
// run stops at the first completion (m steps), so any follow-up is queued
// exactly as stepping would queue it. Results are identical to stepping one
// forward pass at a time; only per-step bookkeeping is skipped.
func (e *engine) fastForward(in *instance, b *scheduler.Batch, m int, d1 Time) {
	limit := Time(math.MaxInt64)
	if e.q.len() > 0 {
		limit = e.q.h[0].at - 1
	}
	if e.cfg.Horizon > 0 {
		limit = min(limit, e.cfg.Horizon)
	}
	t := e.now + d1
	if t > limit {
		e.q.push(event{at: t, kind: evStepDone, replica: int32(in.id)})
		return
	}
	kmax := m
	if !e.followUps {
		kmax = int(^uint(0) >> 1)
	}
	// Each item finishes in step rem; byRem lists the items in order of
	// finishing step, ties in running order (the order Commit finishes them).
	in.rem = in.rem[:0]
	in.byRem = in.byRem[:0]
	for k := range b.Items {
		r := b.Items[k].Req
		in.rem = append(in.rem, r.OutputTokens-r.NumOutput)
		in.byRem = append(in.byRem, int32(k))
	}
	slices.SortStableFunc(in.byRem, func(x, y int32) int { return in.rem[x] - in.rem[y] })
	// Price steps 2.. from the count and KV-length sum of the live decodes
	// (O(1) a step) when the step model allows it, else from their lengths.
	dc, fast := e.cfg.StepModel.(decodeCoster)
	dec := in.in.Decodes
	var base int64 // sum of step-1 KV lengths of the live decodes
	for _, l := range dec {
		base += int64(l)
	}
	n, next := len(dec), 0
	in.durs = append(in.durs[:0], d1)
	for j := 2; j <= kmax; j++ {
		// Drop the requests that finished in step j-1.
		for next < len(in.byRem) && in.rem[in.byRem[next]] == j-1 {
			base -= int64(dec[in.byRem[next]])
			n--
			next++
		}
		if n == 0 {
			break
		}
		var c roofline.StepCost
		ok := false
		if fast {
			c, ok = dc.DecodeCost(n, base+int64(n)*int64(j-1))
		}
		if !ok {
			fast = false
			in.live = in.live[:0]
			for k, l := range dec {
				if in.rem[k] >= j {
					in.live = append(in.live, l+j-1)
				}
			}
			in.in.Decodes = in.live
			c = e.cfg.StepModel.Cost(&in.in)
		}
		d := stepDuration(c)
		if t+d > limit {
			break
		}
		t += d
		in.durs = append(in.durs, d)
	}
	in.in.Decodes = dec
	k := len(in.durs)
	if k == 1 {
		e.q.push(event{at: e.now + d1, kind: evStepDone, replica: int32(in.id)})
		return
	}
	steps, peak, fin := in.sched.FastForward(k, in.finished[:0])
	in.finished = fin
	e.res.KVBlocksPeak = max(e.res.KVBlocksPeak, peak)

	// Account the committed steps at their own end times: tokens and
	// inter-token gaps pooled per client, completions in finishing order.
	clear(in.clientCounts)
	for len(in.clientCounts) < len(e.itlCounts) {
		in.clientCounts = append(in.clientCounts, 0)
	}
	start := e.now
	next = 0
	for j := 1; j <= steps; j++ {
		end := start + in.durs[j-1]
		if j == 1 {
			e.emitTokens(in, b, end)
			for i := range b.Items {
				in.clientCounts[e.table[b.Items[i].Req.Index].client]++
			}
		} else {
			gap := in.durs[j-1].Seconds()
			for c, cnt := range in.clientCounts {
				if cnt > 0 {
					e.res.OutputTokensGenerated += int64(cnt)
					e.col.AddITLN(c, gap, cnt)
				}
			}
		}
		e.res.Steps++
		in.lastStepEnd, in.hadStep = end, true
		for next < len(in.byRem) && in.rem[in.byRem[next]] == j {
			sr := b.Items[in.byRem[next]].Req
			if next >= len(fin) || fin[next] != sr {
				panic("sim: fast-forward completions out of step with the scheduler")
			}
			next++
			idx := int32(sr.Index)
			r := e.table[idx]
			r.lastTok = end
			in.clientCounts[r.client]--
			e.res.Completed++
			e.res.OutputTokensCompleted += int64(sr.OutputTokens)
			in.outstanding--
			// It stayed in the system until end, after the engine's clock.
			e.res.InSystemSeconds += (end - e.now).Seconds()
			if err := e.finish(idx, "ok", end); err != nil {
				e.err = err
				return
			}
		}
		start = end
	}
	if next != len(fin) {
		panic("sim: fast-forward completed requests the engine did not expect")
	}
	for _, k := range in.byRem[next:] {
		e.table[b.Items[k].Req.Index].lastTok = start
	}
	in.busy = false
	if in.sched.HasWork() && !in.wakePending {
		in.wakePending = true
		e.q.push(event{at: start, kind: evWake, replica: int32(in.id)})
	}
}

// decodeCoster prices a pure decode step from its request count and the
// sum of their KV lengths (roofline.CachedStep does, exactly, for models
// without sliding-window layers).
type decodeCoster interface {
	DecodeCost(n int, keySum int64) (roofline.StepCost, bool)
}

var _ decodeCoster = (*roofline.CachedStep)(nil)
