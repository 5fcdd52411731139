package traces

import "math"

// StatusOK is the Status of a request that completed normally. Any other
// status is a rejection; by convention it reads "rejected:<reason>".
const StatusOK = "ok"

// RejectedPrefix starts the Status of a rejected request: "rejected:<reason>".
const RejectedPrefix = "rejected:"

// RequestRecord is one request's outcome. Times (fields ending in S) are
// seconds of simulated time since the run start; latencies (fields ending in
// ms) are milliseconds. A NaN float means undefined: TPOTms is NaN when
// OutputTokens <= 1, and a rejected request has NaN (or zero) times beyond
// its arrival.
type RequestRecord struct {
	ID      uint64
	Client  string
	Replica int

	ArrivalS        float64 // when the request arrived, s
	FirstScheduledS float64 // when it was first placed in a batch, s
	FirstTokenS     float64 // when its first output token was produced, s
	FinishS         float64 // when its last output token was produced, s

	PromptTokens int // prompt length, including the cached part
	CachedTokens int // prompt tokens served from the prefix cache
	OutputTokens int // output tokens generated

	TTFTms  float64 // FirstTokenS - ArrivalS, ms
	TPOTms  float64 // (E2Ems - TTFTms) / (OutputTokens - 1), ms; NaN when OutputTokens <= 1
	E2Ems   float64 // FinishS - ArrivalS, ms
	QueueMs float64 // FirstScheduledS - ArrivalS, ms

	Preemptions int    // times this request was preempted
	Status      string // StatusOK or "rejected:<reason>"

	// Pool is where a disaggregated run served the request (then Replica
	// is its decode instance); nil otherwise. It is no column of the
	// request trace, whose columns are the same for every run. The engine
	// reuses it: valid until the next record (copy it to keep it).
	Pool *RequestPool
}

// FillLatencies sets TTFTms, TPOTms, E2Ems and QueueMs from the times and
// OutputTokens, with the definitions of vLLM's benchmark_serving:
//
//	TTFT  = first token - arrival
//	TPOT  = (E2E - TTFT) / (output tokens - 1), NaN when output tokens <= 1
//	E2E   = finish - arrival
//	queue = first scheduled - arrival
//
// A request whose Status is not StatusOK gets NaN for all four.
func (r *RequestRecord) FillLatencies() {
	if r.Status != StatusOK {
		r.TTFTms, r.TPOTms, r.E2Ems, r.QueueMs = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		return
	}
	r.TTFTms = (r.FirstTokenS - r.ArrivalS) * 1e3
	r.E2Ems = (r.FinishS - r.ArrivalS) * 1e3
	r.QueueMs = (r.FirstScheduledS - r.ArrivalS) * 1e3
	if r.OutputTokens > 1 {
		r.TPOTms = (r.E2Ems - r.TTFTms) / float64(r.OutputTokens-1)
	} else {
		r.TPOTms = math.NaN()
	}
}

// StepRecord is one engine step (forward pass) of one replica. TimeS is when
// the step started and DurationS how long it took, both in seconds of
// simulated time; ComputeS, MemoryS, CommS and OverheadS break the duration
// down by what bounded it, in seconds.
type StepRecord struct {
	Replica   int
	TimeS     float64
	DurationS float64

	PrefillTokens  int // prompt tokens processed this step
	DecodeRequests int // requests that decoded one token this step
	BatchSize      int // requests in the batch (prefill + decode)

	KVBlocksUsed  int // KV-cache blocks in use after the step
	KVBlocksTotal int // KV-cache blocks on the replica

	ComputeS  float64 // time attributed to compute-bound operators, s
	MemoryS   float64 // time attributed to memory-bound operators, s
	CommS     float64 // tensor-parallel communication time, s
	OverheadS float64 // fixed per-step overhead, s

	Preempted int // requests preempted to make room for this step
}

// columnVisitor is called once per column, in column order. Encoders read
// through the pointers and decoders write through them, so the column order
// and names live in exactly one place per record type.
type columnVisitor interface {
	uintCol(name string, p *uint64)
	intCol(name string, p *int)
	floatCol(name string, p *float64)
	stringCol(name string, p *string)
}

// visitColumns visits the request columns in the order
// id, client, arrival_s, first_scheduled_s, first_token_s, finish_s,
// prompt_tokens, cached_tokens, output_tokens, ttft_ms, tpot_ms, e2e_ms,
// queue_ms, preemptions, replica, status.
func (r *RequestRecord) visitColumns(v columnVisitor) {
	v.uintCol("id", &r.ID)
	v.stringCol("client", &r.Client)
	v.floatCol("arrival_s", &r.ArrivalS)
	v.floatCol("first_scheduled_s", &r.FirstScheduledS)
	v.floatCol("first_token_s", &r.FirstTokenS)
	v.floatCol("finish_s", &r.FinishS)
	v.intCol("prompt_tokens", &r.PromptTokens)
	v.intCol("cached_tokens", &r.CachedTokens)
	v.intCol("output_tokens", &r.OutputTokens)
	v.floatCol("ttft_ms", &r.TTFTms)
	v.floatCol("tpot_ms", &r.TPOTms)
	v.floatCol("e2e_ms", &r.E2Ems)
	v.floatCol("queue_ms", &r.QueueMs)
	v.intCol("preemptions", &r.Preemptions)
	v.intCol("replica", &r.Replica)
	v.stringCol("status", &r.Status)
}

// visitColumns visits the step columns in the order replica, time_s,
// duration_s, prefill_tokens, decode_requests, batch_size, kv_blocks_used,
// kv_blocks_total, compute_s, memory_s, comm_s, overhead_s, preempted.
func (s *StepRecord) visitColumns(v columnVisitor) {
	v.intCol("replica", &s.Replica)
	v.floatCol("time_s", &s.TimeS)
	v.floatCol("duration_s", &s.DurationS)
	v.intCol("prefill_tokens", &s.PrefillTokens)
	v.intCol("decode_requests", &s.DecodeRequests)
	v.intCol("batch_size", &s.BatchSize)
	v.intCol("kv_blocks_used", &s.KVBlocksUsed)
	v.intCol("kv_blocks_total", &s.KVBlocksTotal)
	v.floatCol("compute_s", &s.ComputeS)
	v.floatCol("memory_s", &s.MemoryS)
	v.floatCol("comm_s", &s.CommS)
	v.floatCol("overhead_s", &s.OverheadS)
	v.intCol("preempted", &s.Preempted)
}

// recordPtr is the constraint shared by *RequestRecord and *StepRecord, so
// the CSV and JSON Lines code is written once for both.
type recordPtr[T any] interface {
	*T
	visitColumns(columnVisitor)
}

// nameCollector records column names.
type nameCollector struct{ names []string }

func (c *nameCollector) uintCol(n string, _ *uint64)   { c.names = append(c.names, n) }
func (c *nameCollector) intCol(n string, _ *int)       { c.names = append(c.names, n) }
func (c *nameCollector) floatCol(n string, _ *float64) { c.names = append(c.names, n) }
func (c *nameCollector) stringCol(n string, _ *string) { c.names = append(c.names, n) }

func columnsOf[T any, P recordPtr[T]]() []string {
	var rec T
	var c nameCollector
	P(&rec).visitColumns(&c)
	return c.names
}

// RequestColumns returns the request column names in the order every format
// uses. The slice is freshly allocated.
func RequestColumns() []string { return columnsOf[RequestRecord]() }

// StepColumns returns the step column names in the order every format uses.
// The slice is freshly allocated.
func StepColumns() []string { return columnsOf[StepRecord]() }
