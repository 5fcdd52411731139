package sim

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/traces"
)

// Disaggregated serving follows vLLM's prefill/decode split with the
// NixlConnector, as NVIDIA Dynamo and llm-d deploy it:
//
//  1. The router of the prefill pool sends the request to a prefill instance,
//     which runs it with one output token (the proxy asks for max_tokens 1 and
//     drops that token: examples/online_serving/disaggregated_serving/
//     toy_proxy_server.py in vLLM). Its steps carry prefill chunks only.
//  2. When the prefill finishes, the instance keeps the request's KV blocks
//     (NixlConnector.request_finished delays freeing them) and the decode
//     pool's router picks a decode instance.
//  3. At the decode instance's next scheduling pass, it reserves blocks for
//     the prompt's KV (in FIFO order; a request waits while blocks are short)
//     and reads the KV over the link: LatencyUS plus the bytes one decode GPU
//     receives over the link's bandwidth. NIXL reads the finished prefill's
//     blocks in one transfer after the prefill, so the transfer does not
//     overlap the prefill's layers (vllm/distributed/kv_transfer/
//     kv_connector/v1/nixl_connector.py: start_load_kv runs for requests
//     whose prefill has finished).
//  4. When the KV has arrived, the prefill instance frees its blocks and the
//     decode instance queues the request with all prompt tokens but the last
//     computed; its first step recomputes that token and samples the first
//     output token (vllm/v1/core/sched/scheduler.py,
//     _update_waiting_for_remote_kv), so the decode side emits every output
//     token and TTFT includes the prefill, the transfer and that step.
//
// A decode instance's steps carry no prompt chunks other than that one-token
// recompute, except after a preemption (recomputation, as vLLM does).

// Disagg configures a disaggregated run: a prefill pool, a decode pool and
// the link between them.
type Disagg struct {
	Prefill, Decode Pool
	// KVBytesPerToken is the KV-cache bytes one prompt token sends to each
	// GPU of a decode instance (the decode pool's tensor-parallel layout at
	// the KV dtype); every GPU receives its share in parallel.
	KVBytesPerToken float64
	// LinkBytesPerS is the link's bandwidth per GPU, in bytes/s (> 0).
	LinkBytesPerS float64
	// LinkLatency is the fixed time of one request's transfer.
	LinkLatency Time
}

// Pool is one side of a disaggregated deployment.
type Pool struct {
	// Scheduler configures each of the pool's instances (KV capacity
	// included).
	Scheduler scheduler.Config
	// StepModel prices the pool's forward passes.
	StepModel StepModel
	// Replicas is the number of instances (>= 1).
	Replicas int
	// Router picks the pool's instance per request ("" is round-robin).
	Router routing.Router
	// StateBlocksPerRequest is the blocks each running request holds for a
	// hybrid model's recurrent state (Prepared.StateBlocksPerRequest).
	StateBlocksPerRequest int
}

// LinkError is an impossible KV link: a bandwidth or latency that is not a
// finite number in range.
type LinkError struct{ Field, Reason string }

func (e *LinkError) Error() string { return "kv transfer " + e.Field + ": " + e.Reason }

// Validate checks the pools and the link.
func (d *Disagg) Validate() error {
	for _, p := range []struct {
		name string
		p    *Pool
	}{{"prefill", &d.Prefill}, {"decode", &d.Decode}} {
		if p.p.StepModel == nil {
			return fmt.Errorf("%s pool: step model: must be set", p.name)
		}
		if p.p.Replicas < 1 {
			return fmt.Errorf("%s pool: replicas: must be >= 1, got %d", p.name, p.p.Replicas)
		}
		if _, err := newRouter(p.p.Router); err != nil {
			return fmt.Errorf("%s pool: %w", p.name, err)
		}
		if err := p.p.Scheduler.Validate(); err != nil {
			return fmt.Errorf("%s pool: %w", p.name, err)
		}
	}
	if !(d.LinkBytesPerS > 0) || math.IsInf(d.LinkBytesPerS, 0) {
		return &LinkError{Field: "bandwidth", Reason: fmt.Sprintf("must be a finite number of bytes/s > 0, got %g", d.LinkBytesPerS)}
	}
	if !(d.KVBytesPerToken > 0) || math.IsInf(d.KVBytesPerToken, 0) {
		return &LinkError{Field: "bytes per token", Reason: fmt.Sprintf("must be > 0, got %g", d.KVBytesPerToken)}
	}
	if d.LinkLatency < 0 {
		return &LinkError{Field: "latency", Reason: fmt.Sprintf("must be >= 0, got %d ns", d.LinkLatency)}
	}
	return nil
}

// TransferTime is the time to move the KV of tokens prompt tokens over the
// link: LinkLatency + tokens x KVBytesPerToken / LinkBytesPerS, rounded to
// the nanosecond.
func (d *Disagg) TransferTime(tokens int) Time {
	return d.LinkLatency + FromSeconds(float64(tokens)*d.KVBytesPerToken/d.LinkBytesPerS)
}

// disaggReq is a request's disaggregated-serving state (reqState.dis).
type disaggReq struct {
	// pre is the request as its prefill instance runs it: one output token,
	// blocks held after finishing. reqState.s is the decode side's.
	pre                  scheduler.Request
	prefillInst          int32
	prefillEnd, xferFrom Time
	kvAt                 Time
	preSched, decSched   bool
}

// requestPool is r's RequestPool, in a record the engine reuses.
func (e *engine) requestPool(r *reqState) *traces.RequestPool {
	d := r.dis
	e.dis.rec = traces.RequestPool{PrefillInstance: int(d.prefillInst) - e.dis.pre.insts[0].id, DecodeInstance: int(r.replica),
		PrefillEndS: d.prefillEnd.Seconds(), KVTransferStartS: d.xferFrom.Seconds(), KVArrivalS: d.kvAt.Seconds()}
	return &e.dis.rec
}

// poolState is the engine's view of one pool in a disaggregated run.
type poolState struct {
	insts  []*instance
	router router
	// busy is the pool's forward-pass time, summed over instances.
	busy Time
	// steps counts the pool's passes.
	steps int64
	// kvBlockTime integrates the blocks in use over time (block-ns), for
	// the time-average occupancy; each instance keeps its own last change.
	kvBlockTime float64
	kvPeak      int
	queue       traces.Sketch // ms
}

// disaggState is the engine's state of a disaggregated run (engine.dis).
type disaggState struct {
	cfg       *Disagg
	pre, dec  poolState
	xfer      traces.Sketch // transfer ms
	wait      traces.Sketch // prefill end to transfer start, ms
	bytesSum  float64
	transfers int64
	rec       traces.RequestPool
}

// newDisagg builds the pools' instances, after e.insts's existing ones.
func (e *engine) newDisagg(d *Disagg) error {
	ds := &disaggState{cfg: d}
	for _, p := range []struct {
		cfg    *Pool
		st     *poolState
		prefil bool
	}{{&d.Prefill, &ds.pre, true}, {&d.Decode, &ds.dec, false}} {
		rt, err := newRouter(p.cfg.Router)
		if err != nil {
			return err
		}
		p.st.router = rt
		sm := p.cfg.StepModel
		if m, ok := sm.(*roofline.StepModel); ok {
			sm = roofline.NewCachedStep(m)
		}
		pr := newPricer(sm)
		for range p.cfg.Replicas {
			s, err := scheduler.New(p.cfg.Scheduler)
			if err != nil {
				return err
			}
			if err := s.SetStateBlocksPerRequest(p.cfg.StateBlocksPerRequest); err != nil {
				return err
			}
			in := &instance{id: len(e.insts), sched: s, price: pr, pool: p.st, prefill: p.prefil, decode: !p.prefil}
			e.insts = append(e.insts, in)
			p.st.insts = append(p.st.insts, in)
		}
	}
	e.dis = ds
	return nil
}

// initDisagg prepares the prefill side of a request just enqueued (r.s is
// its decode side); dis is the state r held before, reused.
func (e *engine) initDisagg(r *reqState, dis *disaggReq) {
	if dis == nil {
		dis = &disaggReq{}
	}
	*dis = disaggReq{pre: r.s}
	dis.pre.OutputTokens = 1
	dis.pre.HoldBlocks = true
	r.dis = dis
}

// routePrefill places an arrived request on a prefill instance, or rejects
// it when either pool can never serve it.
func (e *engine) routePrefill(i int32) error {
	r := e.table[i]
	ds := e.dis
	// The decode pool must be able to hold it (prompt and output); the
	// prefill pool checks its own side when the request is added.
	err := ds.dec.insts[0].sched.Check(&r.s)
	if err == nil {
		in := ds.pre.insts[ds.pre.router.pick(&r.w, ds.pre.insts)]
		r.dis.prefillInst = int32(in.id)
		if err = in.sched.Add(&r.dis.pre); err == nil {
			in.outstanding++
			e.waiting++
			e.wake(in)
			return nil
		}
	}
	return e.reject(i, err)
}

// wake schedules an idle instance's next batch formation now.
func (e *engine) wake(in *instance) {
	if !in.busy && !in.wakePending {
		in.wakePending = true
		e.q.push(event{at: e.now, kind: evWake, replica: int32(in.id)})
	}
}

// prefillDone hands a request whose prefill finished at time at on in to a
// decode instance, which starts its transfer at its next scheduling pass.
func (e *engine) prefillDone(in *instance, sr *scheduler.Request, at Time) error {
	in.outstanding--
	ds := e.dis
	r := e.table[sr.Index]
	r.dis.prefillEnd = at
	dec := ds.dec.insts[ds.dec.router.pick(&r.w, ds.dec.insts)]
	r.replica = int32(dec.id - ds.dec.insts[0].id)
	dec.outstanding++
	dec.xfers = append(dec.xfers, int32(sr.Index))
	e.wake(dec)
	return nil
}

// startTransfers reserves blocks on the decode instance in for the requests
// waiting to send their KV there, in arrival order, while blocks last, and
// starts each one's transfer.
func (e *engine) startTransfers(in *instance) error {
	ds := e.dis
	n := 0
	for _, i := range in.xfers {
		r := e.table[i]
		p := r.s.PromptTokens
		ok, err := in.sched.Reserve(&r.s, p)
		if err != nil {
			return fmt.Errorf("request %d: decode instance %d: %w", r.w.ID, in.id, err)
		}
		if !ok {
			break
		}
		n++
		r.dis.xferFrom = e.now
		ds.wait.Add(float64(e.now-r.dis.prefillEnd) / 1e6)
		e.trackKV(in)
		e.q.push(event{at: e.now + ds.cfg.TransferTime(p), kind: evKVDone, replica: int32(in.id), req: i})
	}
	if n > 0 {
		in.xfers = in.xfers[:copy(in.xfers, in.xfers[n:])]
	}
	return nil
}

// kvArrived completes request i's transfer to decode instance in: the
// prefill instance frees its blocks and the decode instance queues it.
func (e *engine) kvArrived(in *instance, i int32) error {
	ds := e.dis
	r := e.table[i]
	pre := e.insts[r.dis.prefillInst]
	e.trackKV(pre)
	if err := pre.sched.Release(&r.dis.pre); err != nil {
		return err
	}
	if pre.sched.HasWork() {
		// Its waiting requests may fit the freed blocks now.
		e.wake(pre)
	}
	r.dis.kvAt = e.now
	ds.xfer.Add(float64(e.now-r.dis.xferFrom) / 1e6)
	ds.bytesSum += float64(r.s.PromptTokens) * ds.cfg.KVBytesPerToken
	ds.transfers++
	if err := in.sched.AddLoaded(&r.s, r.s.PromptTokens-1); err != nil {
		return err
	}
	e.wake(in)
	return nil
}

// trackKV integrates in's blocks in use up to now, before they change.
func (e *engine) trackKV(in *instance) {
	used := in.sched.Stats().KVBlocksUsed
	in.pool.kvBlockTime += float64(used) * float64(e.now-in.kvSince)
	in.kvSince = e.now
	in.pool.kvPeak = max(in.pool.kvPeak, used)
}

// stepDoneDisagg accounts a finished step event of in for its pool.
func (e *engine) stepDoneDisagg(in *instance) {
	for _, d := range in.durs {
		in.pool.busy += d
	}
	in.pool.steps += int64(len(in.durs))
}

// poolScheduled records a request's first step in in's pool: its queue
// time there, from arrival (prefill) or from its KV's arrival (decode).
func (e *engine) poolScheduled(in *instance, r *reqState) {
	d := r.dis
	switch {
	case in.prefill && !d.preSched:
		d.preSched = true
		in.pool.queue.Add(float64(e.now-r.arrival) / 1e6)
	case in.decode && !d.decSched:
		d.decSched = true
		in.pool.queue.Add(float64(e.now-d.kvAt) / 1e6)
	}
}

// pools summarises the pools at the end of a run of duration end.
func (e *engine) pools(end Time) *traces.Pools {
	ds := e.dis
	for _, in := range e.insts {
		e.trackKV(in)
	}
	stats := func(p *poolState, cfg *Pool) traces.PoolStats {
		st := traces.PoolStats{Replicas: len(p.insts), Steps: p.steps, Queue: traces.LatencyOf(&p.queue),
			KVBlocksTotal: cfg.Scheduler.NumGPUBlocks, KVBlocksPeak: p.kvPeak}
		if end > 0 {
			st.Utilization = float64(p.busy) / (float64(end) * float64(len(p.insts)))
			if cfg.Scheduler.NumGPUBlocks > 0 {
				st.KVOccupancyMean = p.kvBlockTime / (float64(end) * float64(len(p.insts)) * float64(cfg.Scheduler.NumGPUBlocks))
			}
		}
		for _, in := range p.insts {
			st.Preemptions += in.sched.Stats().Preemptions
		}
		return st
	}
	out := &traces.Pools{Prefill: stats(&ds.pre, &ds.cfg.Prefill), Decode: stats(&ds.dec, &ds.cfg.Decode),
		KVTransfer: traces.LatencyOf(&ds.xfer), KVWait: traces.LatencyOf(&ds.wait)}
	if ds.transfers > 0 {
		out.KVTransferBytesMean = ds.bytesSum / float64(ds.transfers)
	}
	return out
}
