package sim

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// StepModel prices one forward pass of a batch. *roofline.StepModel
// satisfies it; Cost must be a pure function of its input.
type StepModel interface {
	Cost(in *roofline.StepInput) roofline.StepCost
}

// Source supplies requests. *workload.Generator satisfies it.
type Source interface {
	// NextArrival returns the next request whose arrival time is known in
	// advance, in nondecreasing ArrivalNS; false when there are no more.
	NextArrival() (workload.Request, bool)
	// OnComplete is told when a request completes or is rejected and may
	// return a follow-up request (closed-loop clients, session turns).
	OnComplete(r workload.Request, finishNS int64) (workload.Request, bool)
}

// Sink receives records as the run produces them (streamed, not kept).
type Sink interface {
	Request(rec *traces.RequestRecord) error
	Step(rec *traces.StepRecord) error
}

// DiscardSink drops every record.
type DiscardSink struct{}

func (DiscardSink) Request(*traces.RequestRecord) error { return nil }
func (DiscardSink) Step(*traces.StepRecord) error       { return nil }

var _ Sink = DiscardSink{}

// Config is one simulation: identical instances behind a router.
type Config struct {
	// Scheduler configures every instance (KV capacity included).
	Scheduler scheduler.Config
	// StateBlocksPerRequest is the KV blocks each running request holds for
	// a hybrid model's recurrent state (Prepared.StateBlocksPerRequest;
	// scheduler.Scheduler.SetStateBlocksPerRequest); 0 for attention-only
	// models.
	StateBlocksPerRequest int
	// Window is a sliding-window model's sliding cache groups
	// (Prepared.Window; scheduler.Scheduler.SetWindow); the zero Window
	// for other models.
	Window scheduler.Window
	// StepModel prices forward passes; shared by all replicas.
	StepModel StepModel
	// Replicas is the number of identical instances (>= 1).
	Replicas int
	// Router picks a replica per request: routing.RoundRobin (default; also
	// ""), routing.LeastOutstanding or routing.PrefixAffinity.
	Router routing.Router
	// Clients names the workload's clients, indexed by Request.Client; a
	// request of an index it does not name is an error. Empty: every
	// request is client 0, named "client-0".
	Clients []string
	// Horizon stops the run at this simulated time; 0 runs until every
	// request is done. Requests still in flight then are counted, not
	// recorded.
	Horizon Time
	// StepTrace sends one StepRecord per forward pass to the sink.
	StepTrace bool
	// OnProgress, when set, is called after every completed or rejected
	// request with the running count (deterministic; no wall clock).
	OnProgress func(done int64)
	// FrontendDelay is the time between a request's arrival and the engine
	// seeing it (API server: HTTP, tokenisation). It adds to TTFT and E2E,
	// not to TPOT. Sim.Prepare takes it from the GPU profile.
	FrontendDelay Time
	// AsyncScheduling forms each step's batch while the step before it runs
	// (vLLM's async scheduling: vllm/v1/engine/core.py
	// step_with_batch_queue keeps two batches in flight and schedules the
	// next as soon as one is launched). A request that reaches a busy
	// instance waits in its inbox and joins the scheduler's queue when the
	// next step starts, so the earliest batch it can be in is the one after
	// that; an idle instance schedules it at once, as without. Aggregated
	// serving only: the pools of a disaggregated run schedule synchronously.
	AsyncScheduling bool
	// NoFastForward disables decode fast-forwarding (runs of pure decode
	// steps applied in one go). Results are identical either way; tests use
	// it to prove that.
	NoFastForward bool
	// ReloadBlockSeconds is the time, in s, to copy one KV block from the
	// CPU tier back to the GPUs (each GPU its shard, over its own host link,
	// in parallel); a step that reloads blocks (scheduler.Batch.ReloadBlocks)
	// lasts that much longer per block. 0 without a CPU tier.
	ReloadBlockSeconds float64
	// CheckInvariants makes every step verify the scheduler's KV and queue
	// invariants (used + free == total, ...); for tests, it costs O(blocks).
	CheckInvariants bool
	// Speculative, when not nil, turns on speculative decoding
	// (speculative.go); Scheduler.Speculative must then draft the same K.
	Speculative *Speculation
	// Disagg, when not nil, splits the deployment into a prefill pool and a
	// decode pool (disagg.go); Scheduler, StepModel, Replicas and Router are
	// then not used.
	Disagg *Disagg
	// Context, when not nil, stops the run once it is cancelled (a signal, a
	// deadline): the engine checks it every 1024 events and returns its
	// cause, with no result. It is no input to the simulation itself.
	Context context.Context
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Disagg != nil {
		if err := c.Disagg.Validate(); err != nil {
			return err
		}
		if c.Horizon < 0 || c.FrontendDelay < 0 {
			return fmt.Errorf("horizon and frontend delay: must be >= 0, got %d and %d", c.Horizon, c.FrontendDelay)
		}
		return nil
	}
	if c.StepModel == nil {
		return errors.New("step model: must be set")
	}
	if c.Replicas < 1 {
		return fmt.Errorf("replicas: must be >= 1, got %d", c.Replicas)
	}
	if _, err := newRouter(c.Router); err != nil {
		return err
	}
	if c.Horizon < 0 {
		return fmt.Errorf("horizon: must be >= 0, got %d", c.Horizon)
	}
	if !(c.ReloadBlockSeconds >= 0) || math.IsInf(c.ReloadBlockSeconds, 0) {
		return fmt.Errorf("reload block seconds: must be finite and >= 0, got %g", c.ReloadBlockSeconds)
	}
	if c.FrontendDelay < 0 {
		return fmt.Errorf("frontend delay: must be >= 0, got %d", c.FrontendDelay)
	}
	if c.StateBlocksPerRequest < 0 {
		return fmt.Errorf("state blocks per request: must be >= 0, got %d", c.StateBlocksPerRequest)
	}
	if c.Speculative != nil {
		if err := c.Speculative.validate(c.Scheduler.Speculative); err != nil {
			return err
		}
	} else if c.Scheduler.Speculative.NumTokens > 0 {
		return errors.New("scheduler speculative tokens: set without Config.Speculative")
	}
	return c.Scheduler.Validate()
}

// Result is the outcome of a run. Conservation holds by construction and is
// checked by tests: Arrived == Completed + Rejected + InFlight.
type Result struct {
	Summary traces.Summary
	// Request counts.
	Arrived, Completed, Rejected, InFlight int64
	// Waiting is the part of InFlight never yet placed in a batch: requests
	// still waiting when a horizon stopped the run (0 when it drained).
	Waiting int64
	// Token counts: prompt tokens of arrived requests, output tokens asked
	// for by completed requests, and output tokens actually generated (all
	// requests, including those cut off in flight).
	PromptTokens, OutputTokensCompleted, OutputTokensGenerated int64
	// Engine counters.
	Steps, Events, Preemptions int64
	// OffloadedBlocks and ReloadedBlocks count KV blocks stored to the CPU
	// tier on eviction and loaded back for prefix hits, over all instances
	// (scheduler.Stats); 0 without a CPU tier.
	OffloadedBlocks, ReloadedBlocks int64
	// End is the simulated time of the last processed event.
	End Time
	// KVBlocksTotal is the per-instance KV capacity; KVBlocksPeak the
	// largest number in use at any step end on any instance.
	KVBlocksTotal, KVBlocksPeak int
	// InSystemSeconds is the integral over time of the number of requests
	// in the system (arrived, not yet finished), in request-seconds, kept
	// by the engine independently of the records: InSystemSeconds / End is
	// the time-average occupancy L of Little's law.
	InSystemSeconds float64
	// PeakInSystem is the largest number of requests in the system at once
	// (vllm bench serve's max_concurrent_requests when every request
	// completes).
	PeakInSystem int64
	// MaxOutputTokensPerS is the most output tokens produced in any one
	// second, seconds counted from the first arrival (vllm bench serve's
	// max_output_tokens_per_s; traces.TokenRate).
	MaxOutputTokensPerS float64
	// Speculative is the speculative-decoding outcome (nil when off).
	Speculative *traces.SpecDecode
	// Pools describes the pools of a disaggregated run (Config.Disagg);
	// nil otherwise.
	Pools *traces.Pools
	// tokensLate counts output tokens accounted more than
	// traces.TokenRateWindow seconds out of time order, which
	// MaxOutputTokensPerS leaves out (tests check there are none).
	tokensLate int64
	// asyncExtended counts the decode runs that went a pass beyond an
	// arrival (async_run.go); tests check that they engage.
	asyncExtended int64
	// mixedRuns counts the decode runs that started with a mixed pass
	// (mixed_run.go); tests check that they engage.
	mixedRuns int64
}

// reqState is the engine's bookkeeping for one in-flight request. States
// are pooled: memory is bounded by the number in flight, not the run length.
type reqState struct {
	// Hot fields first (read for every output token).
	lastTok    Time
	hasTok     bool
	client     int32
	w          workload.Request
	s          scheduler.Request
	segs       []scheduler.Segment
	replica    int32
	fromSource bool // arrived through NextArrival (so fetch the next one)
	// dis is the disaggregated-serving state (disagg.go); nil when off.
	dis        *disaggReq
	arrival    Time
	firstSched Time
	firstTok   Time
	hasSched   bool
}

type engine struct {
	cfg       Config
	src       Source
	sink      Sink
	q         queue
	now       Time
	table     []*reqState
	free      []int32
	insts     []*instance
	router    router
	col       *traces.Collector
	res       Result
	itlCounts []int
	rec       traces.RequestRecord
	rate      traces.TokenRate
	step      traces.StepRecord
	done      int64
	inSystem  int64
	waiting   int64 // arrived, accepted, not yet in any batch
	// followUps is false when the source never answers a completion with a
	// new request (open-loop clients only), which lets decode fast-forward
	// run through completions.
	followUps bool
	// dis is the state of a disaggregated run (disagg.go); nil otherwise.
	dis *disaggState
	// specStats are the speculative-decoding totals (speculative.go).
	specStats specStats
	// flush is the instance whose decode run spans the next event, with
	// passes to account before that event is processed (flushRun); nil when
	// none.
	flush *instance
	// ahead holds source arrivals read ahead of time (arrivalAt), in order;
	// srcDone is set once the source has none left.
	ahead   []workload.Request
	srcDone bool
}

// Run simulates the workload from src until it is exhausted (or the
// horizon), streaming records to sink, and returns the summary. It is
// deterministic: the same inputs give the same result and records.
func Run(cfg Config, src Source, sink Sink) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		sink = DiscardSink{}
	}
	// A data-parallel deployment runs DP attention ranks per replica, each an
	// instance with its own scheduler and KV cache behind the router; the
	// step model prices their shared MoE layers (roofline/moe.go).
	ranks := 1
	if d, ok := cfg.StepModel.(interface{ DP() int }); ok {
		ranks = max(d.DP(), 1)
	}
	if sm, ok := cfg.StepModel.(*roofline.StepModel); ok {
		// Memoise the token-count-dependent part of step prices for this run
		// (bit-identical results; the cache is private to this goroutine).
		cfg.StepModel = roofline.NewCachedStep(sm)
	}
	rt, err := newRouter(cfg.Router)
	if err != nil {
		return nil, err
	}
	if len(cfg.Clients) == 0 {
		// Unnamed requests all belong to client 0.
		cfg.Clients = []string{"client-0"}
	}
	e := &engine{cfg: cfg, src: src, sink: sink, router: rt}
	e.col = traces.NewCollector(cfg.Clients)
	e.followUps = true
	if f, ok := src.(interface{ HasFollowUps() bool }); ok {
		e.followUps = f.HasFollowUps()
	}
	e.itlCounts = make([]int, len(cfg.Clients))
	if cfg.Disagg != nil {
		if err := e.newDisagg(cfg.Disagg); err != nil {
			return nil, err
		}
		e.res.KVBlocksTotal = cfg.Disagg.Decode.Scheduler.NumGPUBlocks
	} else {
		pr := newPricer(cfg.StepModel)
		for i := 0; i < cfg.Replicas*ranks; i++ {
			s, err := scheduler.New(cfg.Scheduler)
			if err != nil {
				return nil, err
			}
			if err := s.SetStateBlocksPerRequest(cfg.StateBlocksPerRequest); err != nil {
				return nil, err
			}
			if err := s.SetWindow(cfg.Window); err != nil {
				return nil, err
			}
			e.insts = append(e.insts, &instance{id: i, sched: s, price: pr})
		}
		e.res.KVBlocksTotal = cfg.Scheduler.NumGPUBlocks
	}
	if err := e.fetchArrival(); err != nil {
		return nil, err
	}
	for e.q.len() > 0 {
		if cfg.Context != nil && e.res.Events&1023 == 0 {
			if err := context.Cause(cfg.Context); err != nil {
				return nil, err
			}
		}
		ev := e.q.pop()
		if cfg.Horizon > 0 && ev.at > cfg.Horizon {
			break
		}
		e.res.InSystemSeconds += float64(e.inSystem) * (ev.at - e.now).Seconds()
		e.now = ev.at
		e.res.Events++
		if e.flush != nil {
			if err := e.flushRun(); err != nil {
				return nil, err
			}
		}
		var err error
		switch ev.kind {
		case evArrival:
			err = e.arrive(ev.req)
		case evWake:
			in := e.insts[ev.replica]
			in.wakePending = false
			err = e.startStep(in)
		case evStepDone:
			err = e.finishStep(e.insts[ev.replica])
		case evKVDone:
			err = e.kvArrived(e.insts[ev.replica], ev.req)
		}
		if err != nil {
			return nil, err
		}
	}
	e.res.End = e.now
	e.res.MaxOutputTokensPerS, e.res.tokensLate = e.rate.Max(), e.rate.Late()
	e.res.InFlight = e.res.Arrived - e.res.Completed - e.res.Rejected
	e.res.Waiting = e.waiting
	for _, in := range e.insts {
		st := in.sched.Stats()
		e.res.Preemptions += st.Preemptions
		e.res.OffloadedBlocks += st.OffloadedBlocks
		e.res.ReloadedBlocks += st.ReloadedBlocks
	}
	if e.dis != nil {
		e.res.Pools = e.pools(e.now)
		e.res.KVBlocksPeak = e.res.Pools.Decode.KVBlocksPeak
	}
	e.col.AddPreemptions(int(e.res.Preemptions))
	e.col.SetKV(e.res.KVBlocksTotal, e.res.KVBlocksPeak)
	e.res.Summary = e.col.Summary()
	e.res.Speculative = e.specResult()
	return &e.res, nil
}

// alloc takes a pooled request state.
func (e *engine) alloc() (int32, *reqState) {
	if n := len(e.free); n > 0 {
		i := e.free[n-1]
		e.free = e.free[:n-1]
		return i, e.table[i]
	}
	e.table = append(e.table, &reqState{})
	i := int32(len(e.table) - 1)
	return i, e.table[i]
}

func (e *engine) release(i int32) { e.free = append(e.free, i) }

// enqueue registers w as a future arrival.
func (e *engine) enqueue(w workload.Request, fromSource bool) error {
	at := Time(w.ArrivalNS)
	if at+e.cfg.FrontendDelay < e.now {
		return fmt.Errorf("request %d: arrival %v s is before the current time %v s", w.ID, at.Seconds(), e.now.Seconds())
	}
	if w.Client < 0 || w.Client >= len(e.cfg.Clients) {
		return fmt.Errorf("request %d: client index %d, but Config.Clients names %d clients", w.ID, w.Client, len(e.cfg.Clients))
	}
	i, r := e.alloc()
	dis := r.dis
	segs := r.segs[:0]
	for _, sg := range w.Segments {
		segs = append(segs, scheduler.Segment{Key: sg.Key, Tokens: sg.Tokens})
	}
	*r = reqState{w: w, segs: segs, fromSource: fromSource, arrival: at, client: int32(e.clientIndex(w.Client))}
	r.s = scheduler.Request{
		ID:           w.ID,
		Seq:          w.ID,
		Priority:     w.Priority,
		PromptTokens: w.PromptTokens,
		OutputTokens: w.OutputTokens,
		Segments:     segs,
		Index:        int(i),
	}
	if e.dis != nil {
		e.initDisagg(r, dis)
	}
	// The engine sees the request after the server front end has handled it
	// (HTTP, tokenisation); metrics still count from the arrival.
	e.q.push(event{at: at + e.cfg.FrontendDelay, kind: evArrival, req: i})
	return nil
}

func (e *engine) fetchArrival() error {
	w, ok := e.nextArrival()
	if !ok {
		return nil
	}
	return e.enqueue(w, true)
}

func (e *engine) arrive(i int32) error {
	r := e.table[i]
	if r.fromSource {
		if err := e.fetchArrival(); err != nil {
			return err
		}
	}
	e.res.Arrived++
	e.rate.Start(int64(r.arrival))
	e.inSystem++
	e.res.PeakInSystem = max(e.res.PeakInSystem, e.inSystem)
	// It has been in the system since its arrival, before the front end.
	e.res.InSystemSeconds += e.cfg.FrontendDelay.Seconds()
	e.res.PromptTokens += int64(r.w.PromptTokens)
	if e.dis != nil {
		return e.routePrefill(i)
	}
	rep := e.router.pick(&r.w, e.insts)
	r.replica = int32(rep)
	in := e.insts[rep]
	if e.cfg.AsyncScheduling && in.busy {
		// Batches already formed: it joins the queue when the next step
		// starts (admitInbox). The front end rejects what the engine never
		// could serve, now.
		if err := in.sched.Check(&r.s); err != nil {
			return e.reject(i, err)
		}
		in.inbox = append(in.inbox, i)
		in.outstanding++
		e.waiting++
		return nil
	}
	if err := e.admitDue(in); err != nil {
		return err
	}
	if err := in.sched.Add(&r.s); err != nil {
		return e.reject(i, err)
	}
	in.outstanding++
	e.waiting++
	if !in.busy && !in.wakePending {
		in.wakePending = true
		e.q.push(event{at: e.now, kind: evWake, replica: int32(rep)})
	}
	return nil
}

// reject ends request i with the scheduler's *RejectError err; any other
// error is returned, naming the request.
func (e *engine) reject(i int32, err error) error {
	r := e.table[i]
	var rej *scheduler.RejectError
	if !errors.As(err, &rej) {
		return fmt.Errorf("request %d: %w", r.w.ID, err)
	}
	e.res.Rejected++
	return e.finish(i, "rejected:"+rej.Reason, e.now)
}

// admitInbox adds the first n requests of in's inbox (those that reached
// busy instance in while it stepped) to its scheduler's queue, in arrival
// order, and keeps the rest (Config.AsyncScheduling).
func (e *engine) admitInbox(in *instance, n int) error {
	for _, i := range in.inbox[:n] {
		if err := in.sched.Add(&e.table[i].s); err != nil {
			return fmt.Errorf("request %d: %w", e.table[i].w.ID, err) // Check passed at arrival
		}
	}
	in.inbox = append(in.inbox[:0], in.inbox[n:]...)
	return nil
}

// finish emits the request's record, tells the source (the request ended at
// time at), and frees its state.
func (e *engine) finish(i int32, status string, at Time) error {
	r := e.table[i]
	rec := &e.rec
	*rec = traces.RequestRecord{
		ID:           r.w.ID,
		Client:       e.clientName(r.w.Client),
		Replica:      int(r.replica),
		ArrivalS:     r.arrival.Seconds(),
		PromptTokens: r.w.PromptTokens,
		OutputTokens: r.s.NumOutput,
		Preemptions:  r.s.Preemptions,
		Status:       status,
		TTFTms:       math.NaN(),
		TPOTms:       math.NaN(),
		E2Ems:        math.NaN(),
		QueueMs:      math.NaN(),
	}
	if status == "ok" {
		rec.CachedTokens = r.s.NumCached
		rec.FirstScheduledS = r.firstSched.Seconds()
		rec.FirstTokenS = r.firstTok.Seconds()
		rec.FinishS = r.lastTok.Seconds()
		rec.TTFTms = float64(r.firstTok-r.arrival) / 1e6
		rec.E2Ems = float64(r.lastTok-r.arrival) / 1e6
		rec.QueueMs = float64(r.firstSched-r.arrival) / 1e6
		if r.s.NumOutput > 1 {
			rec.TPOTms = (rec.E2Ems - rec.TTFTms) / float64(r.s.NumOutput-1)
		}
	}
	if r.dis != nil {
		// The prefill instance's prefix cache served the cached tokens.
		rec.CachedTokens = r.dis.pre.NumCached
		rec.Preemptions += r.dis.pre.Preemptions
		if status == "ok" {
			rec.Pool = e.requestPool(r)
		}
	}
	e.col.AddRequest(rec)
	if err := e.sink.Request(rec); err != nil {
		return fmt.Errorf("writing request record: %w", err)
	}
	e.done++
	e.inSystem--
	if e.cfg.OnProgress != nil {
		e.cfg.OnProgress(e.done)
	}
	w := r.w
	e.release(i)
	if next, ok := e.src.OnComplete(w, int64(at)); ok {
		return e.enqueue(next, false)
	}
	return nil
}

func (e *engine) clientName(c int) string {
	if c >= 0 && c < len(e.cfg.Clients) {
		return e.cfg.Clients[c]
	}
	return fmt.Sprintf("client-%d", c)
}
