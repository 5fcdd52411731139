package sweep

import (
	"math"

	"github.com/roofsim/roofsim/hardware"
)

// Status values of a Row.
const (
	// StatusOK: the configuration was simulated and some rate met the SLO.
	StatusOK = "ok"
	// StatusSkipped: not simulated; Reason says why (the model does not
	// fit in memory, an engine setting is inconsistent, ...).
	StatusSkipped = "skipped"
	// StatusUnattainable: simulated, but no rate tried (down to the
	// starting rate / 2^20) met the SLO.
	StatusUnattainable = "slo_unattainable"
)

// Row is the outcome of one configuration: one row of the result table.
// Float fields that do not apply are NaN (null in Parquet, empty in CSV);
// integer fields that do not apply are 0 (also written as null).
type Row struct {
	Config
	// Fingerprint identifies the sweep (see Fingerprint); GridSize is the
	// number of configurations of the whole (unsharded) sweep.
	Fingerprint string `json:"fingerprint"`
	GridSize    int    `json:"grid_size"`
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	// KVBlocks is the instance's KV-cache capacity in blocks.
	KVBlocks int `json:"kv_blocks"`
	// NumProbes is the number of simulations the search ran.
	NumProbes int `json:"probes"`
	// MaxRateRPS is the highest total request rate (req/s) that met every
	// SLO bound; 0 when none did.
	MaxRateRPS float64 `json:"max_rate_rps"`
	// MaxConcurrency is, in a concurrency sweep (closed-loop workload), the
	// highest total concurrency that met every SLO bound, and MaxRateRPS
	// the completed requests/s measured at it; 0 in a rate sweep and when
	// no concurrency did.
	MaxConcurrency int `json:"max_concurrency,omitempty"`
	// Metrics at MaxRateRPS, in ms and per second.
	TTFTP50Ms, TTFTP99Ms             float64
	TPOTP50Ms, TPOTP99Ms, TPOTMeanMs float64
	ITLP50Ms, ITLP99Ms               float64
	E2EP50Ms, E2EP99Ms               float64
	ThroughputRPS, OutputTokensPerS  float64
	// GoodputRPS is the rate of completed requests that met every bound
	// individually, as vllm bench serve --goodput counts them
	// (traces.Goodput with SLO.Goodput's thresholds), at MaxRateRPS.
	GoodputRPS                            float64
	OutputTokensPerSPerGPU                float64 // OutputTokensPerS / (TP x DP)
	TokensPerSPerUser                     float64 // 1000 / TPOTMeanMs
	OutputTokensPerRequest                float64 // OutputTokensPerS / ThroughputRPS
	TargetRateRPS                         float64 // NaN without a target
	Replicas, GPUsTotal                   int     // 0 when not applicable
	GPUCostPerHour, CostPerHour, CostMTok float64 // US$; NaN without price/target
	// Pareto marks the non-dominated configurations (see Pareto);
	// Recommended the recommendation (see Recommend).
	Pareto, Recommended bool
	// Probes lists every probe in the order run.
	Probes []Probe `json:"probe_log"`
	// ProfileStatus says how the GPU was priced (calibrated or defaults);
	// zero in a row read from a file written before the column existed.
	ProfileStatus hardware.ProfileStatus `json:"profile_status"`
}

// newRow returns a row for c with every optional float NaN.
func newRow(c Config) Row {
	n := math.NaN()
	return Row{
		Config: c, TTFTP50Ms: n, TTFTP99Ms: n, TPOTP50Ms: n, TPOTP99Ms: n, TPOTMeanMs: n,
		ITLP50Ms: n, ITLP99Ms: n, E2EP50Ms: n, E2EP99Ms: n, ThroughputRPS: n, OutputTokensPerS: n, GoodputRPS: n,
		OutputTokensPerSPerGPU: n, TokensPerSPerUser: n, OutputTokensPerRequest: n, TargetRateRPS: n,
		GPUCostPerHour: n, CostPerHour: n, CostMTok: n,
	}
}

// Result is a sweep's (or a shard's, or a merge's) table.
type Result struct {
	// Fingerprint and GridSize as in every row.
	Fingerprint string
	GridSize    int
	// Rows are sorted by Index: the configurations completed.
	Rows []Row
	// Partial is true when the sweep was interrupted (or, after a merge,
	// some configuration of the grid is missing).
	Partial bool
	// Interrupted is true when the sweep was stopped before its end (its
	// context cancelled); WriteParquet records it in the file's metadata.
	Interrupted bool
	// Recommended is the Index of the recommended configuration, -1 if none.
	Recommended int
	// SLO is the sweep's SLO as ParseSLO reads it ("" when unknown); the
	// Parquet file keeps it, so a merge can draw the SLO lines again.
	SLO string
	// Axes are the grid's swept settings beyond its typed lists
	// (Grid.Settings): every row's Config.Settings holds its values, and
	// the tables have a column per key (Result.Columns).
	Axes []Axis
}

// Missing returns the configuration indices of the grid absent from Rows.
func (r *Result) Missing() []int {
	have := make(map[int]bool, len(r.Rows))
	for _, row := range r.Rows {
		have[row.Index] = true
	}
	var out []int
	for i := 0; i < r.GridSize; i++ {
		if !have[i] {
			out = append(out, i)
		}
	}
	return out
}
