// Package limits holds the ranges every user-supplied number of roofsim is checked
// against, and the checks that produce one message format for them. The workload file,
// the command line, the environment, GPU and profile files, traces and Hugging Face
// configs all check through these, so a value out of range reads the same wherever it
// came from: "must be in [1, 2147483647], got 3000000000".
//
// The bounds are physical or practical upper limits, chosen so that no arithmetic on an
// accepted value can overflow an int64 nanosecond clock or a token count, and no
// allocation is sized by an unchecked number. Resource bounds that a user may lift
// (the number of requests a run generates) are separate: see MaxRequestsDefault.
package limits

import (
	"fmt"
	"math"
	"strconv"
)

// Token and request counts.
const (
	// MaxTokens bounds every token count (prompt, output, prefix, model length,
	// batch budgets): 2^31-1, so that token counts fit an int32 and a sum of a
	// prompt and an output cannot overflow.
	MaxTokens = 1<<31 - 1
	// MaxRequests bounds request counts (num_requests) and closed-loop
	// concurrency: 1e8.
	MaxRequests = 100_000_000
	// MaxRequestsDefault is how many requests a run may generate before it is
	// refused up front (or stopped, when the count is random) unless the user
	// raises the cap (sim run --max-requests). Memory stays flat in the number
	// of requests, but time does not: 2M requests take minutes.
	MaxRequestsDefault = 2_000_000
	// MaxTurns bounds the turns of one session: a session's prompt grows by
	// every turn's output, so turns x tokens must stay far from overflow.
	MaxTurns = 10_000
	// MaxPrefixGroups bounds the number of shared prefixes of one client (the
	// generator keeps one segment per group).
	MaxPrefixGroups = 100_000
)

// Simulated time.
const (
	// MaxSimSeconds bounds every simulated duration (run cut-off, stage and
	// client durations, think time, ramp-up) and the span of arrivals a client
	// may generate (num_requests / rate): 1e8 s, about 3 years. The engine's
	// clock is an int64 of nanoseconds (292 years), so sums of such spans stay
	// far from overflow.
	MaxSimSeconds = 1e8
	// MinRate is the lowest accepted arrival rate, in requests per second: one
	// request per 1e6 s (11.6 days). Lower rates give no arrival in any
	// simulable window.
	MinRate = 1e-6
	// MaxRate is the highest accepted arrival rate, in requests per second.
	MaxRate = 1e8
	// MinCV and MaxCV bound a gamma arrival process's coefficient of
	// variation. Outside them the gamma shape 1/cv² under- or overflows
	// (cv 1e-155 gives no arrivals, cv 1e4 bursts of millions at one instant).
	MinCV = 1e-3
	MaxCV = 1e3
)

// Uploads to the web view (sim serve).
const (
	// MaxWorkloadBytes bounds a workload YAML sent to the web view: 1 MiB,
	// hundreds of times an example's size. Parsing costs about 150 bytes of
	// memory per byte of YAML, so the cap keeps one upload near 150 MB.
	MaxWorkloadBytes = 1 << 20
)

// Deployment.
const (
	// MaxTP bounds the tensor-parallel degree (GPUs in one instance).
	MaxTP = 1024
	// MaxReplicas bounds the instances behind the router.
	MaxReplicas = 4096
	// MaxNumSeqs bounds vLLM max_num_seqs.
	MaxNumSeqs = 1 << 20
	// MaxBatchedTokens bounds vLLM max_num_batched_tokens (one step's tokens).
	MaxBatchedTokens = 1 << 24
	// MaxKVBlocks bounds the KV blocks of one instance, pinned or derived
	// (2^25: 33.5M blocks, 4 bytes of free-list and a block record each).
	MaxKVBlocks = 1 << 25
	// MaxKVBlocksTotal bounds the KV blocks of all replicas together, which the
	// engine holds in memory at once.
	MaxKVBlocksTotal = 1 << 26
	// MaxGraphCaptureTokens bounds a CUDA-graph capture size.
	MaxGraphCaptureTokens = 1 << 20
)

// GPU and profile figures, in the units of the GPU schema.
const (
	// PeakTFLOPS range: 1 GFLOP/s to 1 EFLOP/s dense.
	MinPeakTFLOPS, MaxPeakTFLOPS = 1e-3, 1e6
	// Memory bandwidth range in GB/s: 1 GB/s to 1 PB/s.
	MinBandwidthGBps, MaxBandwidthGBps = 1, 1e6
	// Device memory range in GiB: 1/16 GiB to 4 TiB.
	MinMemoryGiB, MaxMemoryGiB = 1.0 / 16, 4096
	// MaxInterconnectGBps bounds a GPU-to-GPU link in GB/s.
	MaxInterconnectGBps = 1e5
	// MaxL2MiB bounds the on-chip cache in MiB.
	MaxL2MiB = 1e4
	// MaxOverheadUS bounds every fixed time of a profile (launch, step,
	// request, front end, all-reduce latency) in microseconds: 1 s.
	MaxOverheadUS = 1e6
	// MaxCurveExp bounds an efficiency curve's knee exponent.
	MaxCurveExp = 16
)

// Model shapes (Hugging Face config.json and the catalog).
const (
	MaxHidden       = 1 << 20
	MaxLayers       = 10_000
	MaxHeads        = 1 << 16
	MaxHeadDim      = 1 << 14
	MaxVocab        = 100_000_000
	MaxExperts      = 1 << 16
	MaxIntermediate = 1 << 24
)

// Input file sizes, in bytes. Every file roofsim reads is opened through
// internal/safefile, which refuses anything but a regular file and stops reading
// at the cap of the file's kind, so a FIFO, a device such as /dev/zero or a file
// that keeps growing gives an error instead of a hang or an exhausted memory.
// The caps are far above real inputs: the largest kernel table in shared/data
// is 10 MB, a 1M-request requests.csv about 150 MB.
const (
	// MaxWorkloadFileBytes caps a workload YAML or inference-perf config.
	MaxWorkloadFileBytes = 64 << 20
	// MaxConfigFileBytes caps a model config.json, hf_quant_config.json, a GPU
	// or profile YAML, an engine config JSON and an ops file: all are small
	// documents read whole.
	MaxConfigFileBytes = 64 << 20
	// MaxTableFileBytes caps a measurement table read whole into rows: kernel
	// tables (CSV), per-step tables, serving and throughput measurements,
	// empirical length tables, Vidur tables.
	MaxTableFileBytes = 1 << 30
	// MaxResultFileBytes caps a result document read whole: run.json, a vllm
	// bench serve result (with per-request arrays), an inference-perf report, a
	// sweep result Parquet file.
	MaxResultFileBytes = 1 << 30
	// MaxTraceFileBytes caps a trace that is streamed record by record: request
	// and step traces (CSV, JSON Lines, Parquet), replay traces (whose rows are
	// also capped at MaxRequests) and per-request detail files.
	MaxTraceFileBytes = 64 << 30
)

// IntIn checks lo <= v <= hi; the error reads "must be in [lo, hi], got v".
func IntIn(v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("must be in [%s, %s], got %d", fmtInt(lo), fmtInt(hi), v)
	}
	return nil
}

// IntAtMost checks 0 <= v <= hi with the reason "must be in [0, hi]" (0 often means
// "unset" or "derive").
func IntAtMost(v, hi int) error { return IntIn(v, 0, hi) }

// FloatIn checks lo <= v <= hi and finite (NaN fails); the error reads
// "must be in [lo, hi], got v".
func FloatIn(v, lo, hi float64) error {
	if !(v >= lo && v <= hi) {
		return fmt.Errorf("must be in [%s, %s], got %s", fmtFloat(lo), fmtFloat(hi), fmtFloat(v))
	}
	return nil
}

// SecondsAtMost checks a duration in seconds: 0 <= s <= MaxSimSeconds.
func SecondsAtMost(s float64) error {
	switch {
	case !(s >= 0):
		return fmt.Errorf("must not be negative, got %s s", fmtFloat(s))
	case s > MaxSimSeconds:
		return fmt.Errorf("must be at most %s s (about 3 years of simulated time), got %s s", fmtFloat(MaxSimSeconds), fmtFloat(s))
	}
	return nil
}

func fmtInt(v int) string { return strconv.Itoa(v) }

func fmtFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}
