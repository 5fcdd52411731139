package traces

import "strconv"

// Pools describes the two pools of a disaggregated run (nil on a Result for
// an aggregated one) and the KV transfers between them.
type Pools struct {
	Prefill PoolStats `json:"prefill"`
	Decode  PoolStats `json:"decode"`
	// KVTransfer is the time of one request's KV transfer over the link,
	// from its start (the decode instance has reserved the blocks) to the
	// KV's arrival, in ms.
	KVTransfer LatencyStats `json:"kv_transfer"`
	// KVWait is the time from a request's prefill end to its transfer's
	// start: waiting for the decode instance to reserve blocks, in ms.
	KVWait LatencyStats `json:"kv_wait"`
	// KVTransferBytes is the mean bytes one receiving GPU gets per request.
	KVTransferBytesMean float64 `json:"kv_transfer_bytes_per_gpu_mean"`
}

// PoolStats is one pool's load over a run.
type PoolStats struct {
	// Replicas, TP and GPU describe the pool: Replicas x TP GPUs of type GPU.
	Replicas int    `json:"replicas"`
	TP       int    `json:"tp"`
	GPU      string `json:"gpu"`
	// Utilization is the share of the run's time the pool's instances spent
	// in forward passes, in [0, 1] (busy time over replicas x duration).
	Utilization float64 `json:"utilization"`
	// Steps counts the pool's forward passes.
	Steps int64 `json:"steps"`
	// Queue is each request's wait for its first step in this pool, in ms:
	// from arrival (prefill) or from its KV's arrival (decode).
	Queue LatencyStats `json:"queue"`
	// KVBlocksTotal is one instance's KV capacity; KVBlocksPeak the most in
	// use on any instance after a step; KVOccupancyMean the time-average
	// share of the pool's blocks in use, in [0, 1].
	KVBlocksTotal   int     `json:"kv_blocks_total"`
	KVBlocksPeak    int     `json:"kv_blocks_peak"`
	KVOccupancyMean float64 `json:"kv_occupancy_mean"`
	// Preemptions counts the pool's preemptions.
	Preemptions int64 `json:"preemptions"`
}

// LatencyStats summarises a latency distribution, in ms (0 when empty).
type LatencyStats struct {
	Count  uint64  `json:"count"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"median_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// LatencyOf summarises a sketch of values in ms.
func LatencyOf(s *Sketch) LatencyStats {
	if s.Count() == 0 {
		return LatencyStats{}
	}
	return LatencyStats{Count: s.Count(), MeanMs: s.Mean(), P50Ms: s.Quantile(0.5), P90Ms: s.Quantile(0.9), P99Ms: s.Quantile(0.99), MaxMs: s.Max()}
}

// RequestPool is where a disaggregated run served one completed request:
// its instances, by index within their pool, and its KV transfer's times,
// in seconds of simulated time.
type RequestPool struct {
	PrefillInstance, DecodeInstance int
	// PrefillEndS is when its prefill finished, KVTransferStartS when the
	// decode instance reserved blocks and the transfer began, KVArrivalS
	// when the KV had arrived.
	PrefillEndS, KVTransferStartS, KVArrivalS float64
}

// RequestPoolColumns are the columns of a disaggregated run's
// request_pools.csv, after the request's id.
func RequestPoolColumns() []string {
	return []string{"prefill_instance", "decode_instance", "prefill_end_s", "kv_transfer_start_s", "kv_arrival_s", "kv_transfer_ms", "kv_wait_ms"}
}

// Values are p's columns (RequestPoolColumns) as text, times in full
// precision.
func (p *RequestPool) Values() []string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return []string{strconv.Itoa(p.PrefillInstance), strconv.Itoa(p.DecodeInstance), f(p.PrefillEndS), f(p.KVTransferStartS), f(p.KVArrivalS),
		f((p.KVArrivalS - p.KVTransferStartS) * 1e3), f((p.KVTransferStartS - p.PrefillEndS) * 1e3)}
}
