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
//
// Each evStepDone event ends one step event of an instance, which covers
// either one forward pass (the general case) or a decode run: the pending
// pure-decode pass and the passes that follow it before anything else could
// happen (see planDecodeRun). finishStep accounts both the same way, pass by
// pass, so a decode run changes nothing a user can see; only per-pass events,
// Schedule calls and step pricing are skipped.
type instance struct {
	id          int
	sched       *scheduler.Scheduler
	busy        bool // a step event is in progress
	wakePending bool // an evWake is queued
	batch       *scheduler.Batch
	stepStart   Time
	lastStepEnd Time // end of this instance's previous forward pass
	hadStep     bool
	cost        roofline.StepCost
	in          roofline.StepInput
	finished    []*scheduler.Request
	outstanding int // requests routed here and not yet finished
	// inbox holds the requests that arrived while a step was in progress
	// under async scheduling, in arrival order: they join the scheduler's
	// queue when the next step starts (engine.admitInbox).
	inbox []int32

	// durs are the durations of the passes the pending step event covers, the
	// pending batch first; more than one only for a decode run.
	durs []Time
	// committed is true when the scheduler has already committed the passes
	// (a decode run); otherwise finishStep commits the pending batch.
	committed bool
	// doneBy[j] is the number of finished (in finishing order) that finish by
	// the end of pass j of a decode run.
	doneBy []int
	// Accounting cursor of the pending step event: passes before acct have
	// had their tokens and completions accounted, the next starts at
	// acctStart, and finished[acctFin:] are still to be accounted.
	acct      int
	acctStart Time
	acctFin   int
	// due is set when a decode run went a pass beyond an arrival
	// (async_run.go): the inbox requests that arrived before dueBefore, the
	// start of its last pass, join the queue before the next batch is formed.
	due       bool
	dueBefore Time
	// Decode-run scratch: items' remaining outputs, the items ordered by it,
	// and live decodes per client.
	rem          []int
	byRem        []uint64 // rem<<32 | item index, sorted (the first to finish)
	clientCounts []int
	runLens      []int // a mixed run's pass-1 KV lengths (mixed_run.go)

	// price prices the instance's passes (shared by the instances of one
	// step model).
	price *pricer
	// Disaggregated serving (disagg.go): the instance's pool (nil when
	// aggregated), its side, the requests waiting to reserve blocks for
	// their KV transfer here (decode side, in order), and the time its
	// KV blocks in use last changed.
	pool            *poolState
	prefill, decode bool
	xfers           []int32
	kvSince         Time
}

// pricer prices forward passes for the instances of one step model.
type pricer struct {
	// runs prices pure decode steps and the passes of decode runs exactly,
	// from their count and KV sum where the step model allows it.
	runs *roofline.DecodeRunPricer
	// bounds prices decode-run passes to within a bound; nil when the step
	// model cannot (boundedDuration).
	bounds decodeBounder
}

func newPricer(sm StepModel) *pricer {
	p := &pricer{runs: roofline.NewDecodeRunPricer(sm)}
	p.bounds, _ = sm.(decodeBounder)
	return p
}

// startStep forms the next batch and schedules the end of its step event;
// with nothing runnable the instance goes idle until the next arrival.
func (e *engine) startStep(in *instance) error {
	if in.pool != nil {
		e.trackKV(in)
		if err := e.startTransfers(in); err != nil {
			return err
		}
	}
	if err := e.admitDue(in); err != nil {
		return err
	}
	b := in.sched.Schedule()
	if len(in.inbox) > 0 {
		// Async scheduling formed this batch while the last step ran, before
		// these requests arrived; they can be in the next one. When nothing
		// was formed, the engine's loop schedules them at once.
		if err := e.admitInbox(in, len(in.inbox)); err != nil {
			return err
		}
		if b == nil {
			b = in.sched.Schedule()
		}
	}
	if b == nil || len(b.Items) == 0 {
		in.busy = false
		return nil
	}
	in.batch = b
	in.in.Prefills = in.in.Prefills[:0]
	// The decodes' lengths go to a local slice grown to hold every item, so
	// the loop appends without reloading or growing it.
	decodes := slices.Grow(in.in.Decodes[:0], len(b.Items))
	in.in.Verifies = in.in.Verifies[:0]
	// Only admitted requests can be scheduled for the first time: the
	// running ones before them were admitted by an earlier step.
	first := len(b.Items) - b.Admitted
	k0 := 0
	if in.pool == nil && !e.cfg.CheckInvariants && e.cfg.Speculative == nil {
		// The leading decodes of the running items only give their KV
		// lengths (the loop below's default case).
		for ; k0 < first && !b.Items[k0].Prefill; k0++ {
			decodes = append(decodes, b.Items[k0].Context+b.Items[k0].Tokens)
		}
	}
	for k := k0; k < len(b.Items); k++ {
		it := &b.Items[k]
		if k >= first || in.pool != nil {
			r := e.table[it.Req.Index]
			if !r.hasSched {
				r.hasSched = true
				r.firstSched = e.now
				e.waiting--
			}
			if in.pool != nil {
				e.poolScheduled(in, r)
			}
		} else if e.cfg.CheckInvariants && !e.table[it.Req.Index].hasSched {
			return fmt.Errorf("replica %d at %v s: running request %d was never scheduled", in.id, e.now.Seconds(), it.Req.ID)
		}
		switch {
		case it.Prefill:
			in.in.Prefills = append(in.in.Prefills, roofline.Chunk{Tokens: it.Tokens, Cached: it.Context, Sampled: it.Sampled})
		case e.cfg.Speculative != nil:
			// A verify: the last sampled token and its drafts.
			in.in.Verifies = append(in.in.Verifies, roofline.Chunk{Tokens: it.Tokens, Cached: it.Context, Sampled: true})
		default:
			decodes = append(decodes, it.Context+it.Tokens)
		}
	}
	in.in.Decodes = decodes
	// Without a step trace only the pass's duration is used: take it from a
	// bounded price when the bound decides it (boundedDuration), else price
	// the pass exactly (in.cost is exact whenever a step trace reads it).
	d, ok := Time(0), false
	if !e.cfg.StepTrace && e.cfg.Speculative == nil {
		d, ok = in.price.boundedStepDuration(&in.in)
	}
	if !ok {
		if e.cfg.Speculative != nil {
			in.cost = e.specCost(in, b)
		} else {
			in.cost = in.price.runs.Step(&in.in)
		}
		if !(in.cost.Seconds > 0 && in.cost.Seconds <= MaxStepSeconds) {
			return fmt.Errorf("replica %d at %.3f s: the step model prices a forward pass of %d tokens at %g s, outside (0, %g] s: check the GPU's peaks, bandwidth and efficiencies",
				in.id, e.now.Seconds(), b.NumTokens, in.cost.Seconds, float64(MaxStepSeconds))
		}
		d = stepDuration(in.cost)
	}
	if b.ReloadBlocks > 0 {
		d += FromSeconds(float64(b.ReloadBlocks) * e.cfg.ReloadBlockSeconds)
	}
	in.busy = true
	in.stepStart = e.now
	in.durs = append(in.durs[:0], d)
	in.committed = false
	in.acct, in.acctStart, in.acctFin = 0, e.now, 0
	// A decode instance with transfers waiting for blocks steps one pass at
	// a time, so each pass's freed blocks can start them.
	if !e.cfg.StepTrace && !e.cfg.NoFastForward && len(in.xfers) == 0 {
		if m := in.sched.DecodeRunLimit(); m >= 2 || m == 1 && !e.followUps {
			if err := e.planDecodeRun(in, b, m); err != nil {
				return err
			}
		}
	}
	end := e.now
	for _, d := range in.durs {
		end += d
	}
	e.q.push(event{at: end, kind: evStepDone, replica: int32(in.id)})
	return nil
}

// MaxStepSeconds bounds the price of one forward pass: a longer step is an
// error (startStep), never a wrapped clock.
const MaxStepSeconds = 1e6

// stepDuration rounds a step's cost to whole nanoseconds; time always moves
// forward by at least 1 ns and by at most MaxStepSeconds (no overflow of the
// clock, whatever the step model returns).
func stepDuration(c roofline.StepCost) Time {
	if !(c.Seconds < MaxStepSeconds) {
		return FromSeconds(MaxStepSeconds)
	}
	return max(FromSeconds(c.Seconds), 1)
}

// finishStep applies the forward passes of a completed step event, in order:
// output tokens, ITL samples and finished requests at each pass's own end,
// the step record; then wakes the instance again.
func (e *engine) finishStep(in *instance) error {
	b := in.batch
	e.res.Steps += int64(len(in.durs))
	if in.pool != nil {
		e.trackKV(in)
		e.stepDoneDisagg(in)
	}
	if !in.committed {
		in.finished = in.sched.Commit(b, in.finished[:0])
		e.res.KVBlocksPeak = max(e.res.KVBlocksPeak, in.sched.Stats().KVBlocksUsed)
	}
	if e.cfg.CheckInvariants {
		if err := in.sched.CheckInvariants(); err != nil {
			return fmt.Errorf("replica %d after step %d at %v s: %w", in.id, e.res.Steps, e.now.Seconds(), err)
		}
	}
	if e.cfg.StepTrace {
		if err := e.traceStep(in, b); err != nil {
			return err
		}
	}
	if err := e.accountPasses(in, len(in.durs)); err != nil {
		return err
	}
	if steps := len(in.durs); steps > 1 {
		// The survivors' last token came with the run's last pass.
		for k, rem := range in.rem {
			if rem > steps {
				e.table[b.Items[k].Req.Index].lastTok = in.acctStart
			}
		}
	}
	in.busy = false
	if (in.sched.HasWork() || len(in.inbox) > 0 || len(in.xfers) > 0) && !in.wakePending {
		if next, ok := e.q.nextAt(); !ok || next > e.now {
			// Nothing else happens at this instant: the wake would be the next
			// event popped, so start the next step now.
			return e.startStep(in)
		}
		in.wakePending = true
		e.q.push(event{at: e.now, kind: evWake, replica: int32(in.id)})
	}
	return nil
}

// accountPasses accounts the passes of the pending step event up to (not
// including) pass upto, from the cursor on: output tokens, ITL samples and
// the requests that finished, at each pass's own end.
func (e *engine) accountPasses(in *instance, upto int) error {
	b := in.batch
	fin := in.finished
	run := len(in.durs) > 1
	start, next := in.acctStart, in.acctFin
	for j := in.acct; j < upto; j++ {
		d := in.durs[j]
		end := start + d
		if j == 0 {
			e.emitTokens(in, b, end)
			if run {
				e.countLiveDecodes(in, b)
			}
		} else {
			e.emitRunTokens(in, d, end)
		}
		in.lastStepEnd, in.hadStep = end, true
		done := len(fin)
		if in.committed {
			done = in.doneBy[j]
		}
		for ; next < done; next++ {
			sr := fin[next]
			if run {
				r := e.table[sr.Index]
				r.lastTok = end
				in.clientCounts[r.client]--
			}
			if err := e.complete(in, sr, end); err != nil {
				return err
			}
		}
		start = end
	}
	in.acct, in.acctStart, in.acctFin = max(in.acct, upto), start, next
	return nil
}

// flushRun accounts the passes of the decode run planned last that end
// before the event now being processed (never its last pass, which spans
// an event), so the event sees the engine as stepping would have left it.
// It lets the run go once only its last pass is left.
func (e *engine) flushRun() error {
	in := e.flush
	upto, end := in.acct, in.acctStart
	for upto < len(in.durs)-1 && end+in.durs[upto] < e.now {
		end += in.durs[upto]
		upto++
	}
	if upto >= len(in.durs)-1 {
		e.flush = nil
	}
	return e.accountPasses(in, upto)
}

// traceStep sends the step record of the single forward pass b.
func (e *engine) traceStep(in *instance, b *scheduler.Batch) error {
	st := in.sched.Stats()
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
	return nil
}

// complete accounts a request of in that produced its last token at time at
// (at most the engine's clock: a decode run is accounted at its end).
func (e *engine) complete(in *instance, sr *scheduler.Request, at Time) error {
	if in.prefill {
		return e.prefillDone(in, sr, at)
	}
	e.res.Completed++
	e.res.OutputTokensCompleted += int64(sr.OutputTokens)
	in.outstanding--
	if at < e.now {
		// The event loop counted it in the system up to the clock; it left at at.
		e.res.InSystemSeconds -= (e.now - at).Seconds()
	}
	return e.finish(int32(sr.Index), "ok", at)
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
	if in.prefill {
		return // the proxy drops a prefill instance's token (disagg.go)
	}
	counts := e.itlCounts
	clear(counts)
	// A request whose last token came with the instance's previous pass
	// pools its gap (none does before the instance's first pass).
	pooled := Time(-1)
	if in.hadStep {
		pooled = in.lastStepEnd
	}
	sampled := 0
	items, table := b.Items, e.table
	for k := range items {
		it := &items[k]
		if !it.Sampled {
			continue
		}
		sampled += 1 + it.Accepted // a verify's tokens stream as one chunk
		r := table[it.Req.Index]
		if !r.hasTok {
			r.hasTok = true
			r.firstTok = t
		} else if r.lastTok == pooled {
			counts[r.client]++
		} else {
			e.col.AddITL(r.w.Client, float64(t-r.lastTok)/1e9)
		}
		r.lastTok = t
	}
	e.res.OutputTokensGenerated += int64(sampled)
	e.rate.Add(int64(t), sampled)
	e.addPooledITL(e.itlCounts, t-in.lastStepEnd)
}

// addPooledITL records counts[c] inter-token gaps of length gap for each
// client c and returns their total.
func (e *engine) addPooledITL(counts []int, gap Time) (total int) {
	g := float64(gap) / 1e9
	for c, n := range counts {
		if n > 0 {
			e.col.AddITLN(c, g, n)
			total += n
		}
	}
	return total
}

// countLiveDecodes counts the decode run's requests per client.
func (e *engine) countLiveDecodes(in *instance, b *scheduler.Batch) {
	in.clientCounts = slices.Grow(in.clientCounts[:0], len(e.itlCounts))[:len(e.itlCounts)]
	clear(in.clientCounts)
	for k := range b.Items {
		in.clientCounts[e.table[b.Items[k].Req.Index].client]++
	}
}

// emitRunTokens records a pass of a decode run after its first, of duration
// d: every live decode got a token in the previous pass, so each adds one
// token and one gap of d, pooled per client. O(clients).
func (e *engine) emitRunTokens(in *instance, d, end Time) {
	n := e.addPooledITL(in.clientCounts, d)
	e.res.OutputTokensGenerated += int64(n)
	e.rate.Add(int64(end), n)
}

// planDecodeRun extends the pending pure-decode step b (m steps before its
// first request finishes) into a decode run: the passes that start before the
// next queued event and end by the horizon. Every pass but the last ends
// before that event, so nothing could have interleaved with them; the last
// may span it, and stepping would have formed it before the event too, so
// the event cannot change it. The passes before it are accounted when the
// event is processed, before it (flushRun); the last at the run's end. When
// finishing could create work (closed-loop or session follow-ups), the run
// stops at the first completion (m passes), so any follow-up is queued
// exactly as stepping would queue it. It prices the passes, has the scheduler
// commit them, and leaves in.durs and in.doneBy for finishStep.
func (e *engine) planDecodeRun(in *instance, b *scheduler.Batch, m int) error {
	next, horizon := Time(math.MaxInt64), Time(math.MaxInt64)
	if at, ok := e.q.nextAt(); ok {
		next = at
	}
	if e.cfg.Horizon > 0 {
		horizon = e.cfg.Horizon
	}
	t := e.now + in.durs[0]
	if t >= next || t > horizon {
		return nil
	}
	kmax := m
	if !e.followUps {
		kmax = math.MaxInt
	}
	// Each item finishes in pass rem; byRem lists the items that finish by
	// pass sorted in order of finishing pass, ties in running order (the
	// order Commit finishes them). It is extended as the run grows: a run
	// sees few of its requests finish, so sorting them all would be waste.
	in.rem = in.rem[:0]
	for k := range b.Items {
		r := b.Items[k].Req
		in.rem = append(in.rem, r.OutputTokens-r.NumOutput)
	}
	in.byRem = in.byRem[:0]
	sorted := 0
	cover := func(pass int) {
		if pass <= sorted {
			return
		}
		upTo := min(max(pass, 2*sorted, 32), kmax)
		from := len(in.byRem)
		for k, rem := range in.rem {
			if rem > sorted && rem <= upTo {
				in.byRem = append(in.byRem, uint64(rem)<<32|uint64(k))
			}
		}
		slices.Sort(in.byRem[from:])
		sorted = upTo
	}
	// Price passes 2.. from the count and KV-length sum of the live decodes
	// (O(1) a pass) when the step model allows it, else from their lengths
	// (roofline.DecodeRunPricer).
	dec := in.in.Decodes
	if b.NumPrefillTokens > 0 {
		dec = in.mixedRunLengths(b)
	}
	run := roofline.DecodeRun{Lengths: dec, Passes: in.rem}
	var base int64 // sum of pass-1 KV lengths of the live decodes
	for _, l := range dec {
		base += int64(l)
	}
	n, nextFin := len(dec), 0
	spans := false // a pass planned spans the next event
	spanPass := 0  // the passes up to the one that spans it
	var spanEnd Time
	for j := 2; j <= kmax; j++ {
		// Drop the requests that finished in pass j-1.
		cover(j - 1)
		for nextFin < len(in.byRem) && int(in.byRem[nextFin]>>32) == j-1 {
			base -= int64(dec[uint32(in.byRem[nextFin])])
			n--
			nextFin++
		}
		if n == 0 {
			break
		}
		keySum := base + int64(n)*int64(j-1)
		d, ok := in.price.boundedDuration(n, keySum)
		if !ok {
			d = stepDuration(in.price.runs.Pass(run, j, n, keySum))
		}
		if t+d > horizon {
			break
		}
		t += d
		in.durs = append(in.durs, d)
		if spans {
			break // the pass after the spanning one (async_run.go)
		}
		if t >= next {
			// This pass starts before the next event and ends at or after
			// it: stepping would have scheduled it before that event, so
			// nothing the event does can change it; the run ends with it,
			// or under async scheduling with the pass after it.
			spans, spanPass, spanEnd = true, len(in.durs), t
			if !e.asyncExtends(next, t) {
				break
			}
		}
	}
	if len(in.durs) == 1 {
		return nil
	}
	planned := len(in.durs)
	steps, peak, fin := in.sched.AdvanceDecodes(planned, in.finished[:0])
	in.finished, in.committed = fin, true
	in.durs = in.durs[:steps]
	if b.NumPrefillTokens > 0 && steps > 1 {
		e.res.mixedRuns++
	}
	e.res.KVBlocksPeak = max(e.res.KVBlocksPeak, peak)
	// doneBy[j]: items finishing by the end of pass j+1.
	cover(steps)
	in.doneBy = in.doneBy[:0]
	nextFin = 0
	for j := 1; j <= steps; j++ {
		for nextFin < len(in.byRem) && int(in.byRem[nextFin]>>32) == j {
			if nextFin >= len(fin) || fin[nextFin] != b.Items[uint32(in.byRem[nextFin])].Req {
				return fmt.Errorf("replica %d at %v s: decode run: the scheduler finished requests out of the expected order", in.id, e.now.Seconds())
			}
			nextFin++
		}
		in.doneBy = append(in.doneBy, nextFin)
	}
	if nextFin != len(fin) {
		return fmt.Errorf("replica %d at %v s: decode run: the scheduler finished %d requests, %d expected", in.id, e.now.Seconds(), len(fin), nextFin)
	}
	if spans && steps >= spanPass {
		// The passes before the spanning one end before the next event:
		// account them when it is processed, before it, and a pass after
		// it before the first event after its end (flushRun).
		e.flush = in
		if steps > spanPass {
			in.due, in.dueBefore = true, spanEnd
			e.res.asyncExtended++
		}
	}
	return nil
}

// boundedDuration is stepDuration of the pure decode step of n requests with
// KV sum keySum, from the step model's bounded price (DecodeSecondsBound):
// only a pass's duration in whole nanoseconds enters the run, so where the
// bound leaves one rounding, it is exactly stepping's. false when the bound
// does not apply or straddles a rounding boundary (about one pass in 10^4):
// price the pass exactly then.
func (p *pricer) boundedDuration(n int, keySum int64) (Time, bool) {
	if p.bounds == nil {
		return 0, false
	}
	return roundedWithin(p.bounds.DecodeSecondsBound(n, keySum))
}

// boundedStepDuration is boundedDuration for any step (StepSecondsBound).
func (p *pricer) boundedStepDuration(in *roofline.StepInput) (Time, bool) {
	if p.bounds == nil {
		return 0, false
	}
	return roundedWithin(p.bounds.StepSecondsBound(in))
}

// roundedWithin returns stepDuration of every price within err of s, when
// they share one, inside (0, MaxStepSeconds) (so stepDuration rounds it and
// startStep would not reject it); false otherwise.
func roundedWithin(s, err float64, ok bool) (Time, bool) {
	if !ok || !(s-err > 0 && s+err < MaxStepSeconds) {
		return 0, false
	}
	lo, hi := FromSeconds(s-err), FromSeconds(s+err)
	if lo != hi {
		return 0, false
	}
	return max(lo, 1), true
}

// decodeBounder prices steps to within a bound (roofline.CachedStep does;
// see DecodeSecondsBound).
type decodeBounder interface {
	DecodeSecondsBound(n int, keySum int64) (s, err float64, ok bool)
	StepSecondsBound(in *roofline.StepInput) (s, err float64, ok bool)
}

var _ decodeBounder = (*roofline.CachedStep)(nil)
