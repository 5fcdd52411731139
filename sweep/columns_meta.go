package sweep

import "github.com/roofsim/roofsim/workload"

// ColumnInfo describes one column of a result table for a reader: what to
// call it in a narrow table header, its unit, one line of documentation and
// whether a summary table (the web view's) shows it. The column list itself
// stays Columns / ColumnsWith; ColumnInfos annotates it.
type ColumnInfo struct {
	// Name is the column's name in the Parquet/CSV table.
	Name string `json:"name"`
	// Label is a short header ("$/h", "GPUs").
	Label string `json:"label"`
	// Unit is the values' unit ("req/s", "ms", "USD/h"); empty for counts,
	// names and flags.
	Unit string `json:"unit,omitempty"`
	// Doc is one line saying what the value is.
	Doc string `json:"doc"`
	// Table is true for the columns a summary table shows: the
	// configuration (every swept setting), its outcome and its cost.
	Table bool `json:"table"`
	// Setting is true for the columns that name the configuration (gpu,
	// tp, dp, ep, the scheduler limits and every --grid key).
	Setting bool `json:"setting"`
	// Sparse marks a table column that is null in most sweeps (dp and ep
	// when not swept, the cost without a target rate or a price): a table
	// shows it only when some row has a value.
	Sparse bool `json:"sparse,omitempty"`
}

// columnDocs annotates the fixed columns (docs/sweep.md has the long form).
// A column missing here is shown by no summary table; TestColumnInfosCoverColumns
// fails until it is described.
func columnDocs() map[string]ColumnInfo {
	return map[string]ColumnInfo{
		"index":                       {Label: "#", Doc: "the configuration's position in the grid", Table: true},
		"fingerprint":                 {Label: "fingerprint", Doc: "hash of the sweep's inputs (merge checks it)"},
		"grid_size":                   {Label: "grid size", Doc: "configurations in the whole grid"},
		"gpu":                         {Label: "GPU", Doc: "GPU type of one replica", Table: true, Setting: true},
		"tp":                          {Label: "tp", Doc: "tensor-parallel degree", Table: true, Setting: true},
		"dp":                          {Label: "dp", Doc: "data-parallel degree (attention), null when 1", Table: true, Setting: true, Sparse: true},
		"ep":                          {Label: "ep", Doc: "expert-parallel degree, null when 1", Table: true, Setting: true, Sparse: true},
		"max_num_seqs":                {Label: "max_num_seqs", Doc: "the scheduler's running-request cap", Table: true, Setting: true},
		"max_num_batched_tokens":      {Label: "max_num_batched_tokens", Doc: "the scheduler's per-step token budget", Table: true, Setting: true},
		"status":                      {Label: "status", Doc: "ok, or why the configuration has no rate", Table: true},
		"reason":                      {Label: "reason", Doc: "why the status is not ok"},
		"kv_blocks":                   {Label: "KV blocks", Doc: "KV cache blocks per replica"},
		"probes":                      {Label: "probes", Doc: "simulations run to find the rate"},
		"max_rate_rps":                {Label: "max rate", Unit: "req/s", Doc: "highest rate per replica that met the SLO", Table: true},
		"max_concurrency":             {Label: "max concurrency", Doc: "highest concurrency per replica that met the SLO (closed-loop sweeps)", Table: true, Sparse: true},
		"ttft_p50_ms":                 {Label: "TTFT p50", Unit: "ms", Doc: "median time to first token at the max rate"},
		"ttft_p99_ms":                 {Label: "TTFT p99", Unit: "ms", Doc: "99th-percentile time to first token at the max rate", Table: true},
		"tpot_p50_ms":                 {Label: "TPOT p50", Unit: "ms", Doc: "median time per output token at the max rate"},
		"tpot_p99_ms":                 {Label: "TPOT p99", Unit: "ms", Doc: "99th-percentile time per output token at the max rate", Table: true},
		"tpot_mean_ms":                {Label: "TPOT mean", Unit: "ms", Doc: "mean time per output token at the max rate"},
		"itl_p50_ms":                  {Label: "ITL p50", Unit: "ms", Doc: "median inter-token latency at the max rate"},
		"itl_p99_ms":                  {Label: "ITL p99", Unit: "ms", Doc: "99th-percentile inter-token latency at the max rate"},
		"e2e_p50_ms":                  {Label: "E2E p50", Unit: "ms", Doc: "median request latency at the max rate"},
		"e2e_p99_ms":                  {Label: "E2E p99", Unit: "ms", Doc: "99th-percentile request latency at the max rate", Table: true},
		"throughput_rps":              {Label: "throughput", Unit: "req/s", Doc: "completed requests per second at the max rate"},
		"output_tokens_per_s":         {Label: "output tok/s", Unit: "tok/s", Doc: "output tokens per second of one replica at the max rate"},
		"goodput_rps":                 {Label: "goodput", Unit: "req/s", Doc: "requests per second that met every SLO bound"},
		"output_tokens_per_s_per_gpu": {Label: "tok/s/GPU", Unit: "tok/s", Doc: "output tokens per second per GPU at the max rate", Table: true},
		"tokens_per_s_per_user":       {Label: "tok/s/user", Unit: "tok/s", Doc: "1000 / mean TPOT (ms): one user's decode speed", Table: true},
		"output_tokens_per_request":   {Label: "output tok/req", Doc: "mean output tokens per completed request"},
		"target_rate_rps":             {Label: "target", Unit: "req/s", Doc: "the rate the deployment must serve (--target-rate)", Table: true, Sparse: true},
		"replicas":                    {Label: "replicas", Doc: "replicas needed for the target rate", Table: true, Sparse: true},
		"gpus_total":                  {Label: "GPUs", Doc: "GPUs of all those replicas", Table: true, Sparse: true},
		"gpu_cost_per_hour":           {Label: "$/GPU-h", Unit: "USD/h", Doc: "price of one GPU for an hour"},
		"cost_per_hour":               {Label: "$/h", Unit: "USD/h", Doc: "price of every GPU of the deployment for an hour", Table: true, Sparse: true},
		"cost_per_mtok":               {Label: "$/Mtok", Unit: "USD", Doc: "price of a million output tokens at the max rate", Table: true, Sparse: true},
		"pareto":                      {Label: "Pareto", Doc: "on the front of tok/s/GPU against tok/s/user", Table: true},
		"recommended":                 {Label: "recommended", Doc: "the configuration the sweep recommends", Table: true},
		"probe_log":                   {Label: "probe log", Doc: "every probe's rate and outcome (JSON)"},
		"profile_status":              {Label: "profile", Doc: "how the GPU was priced: calibrated, borrowed:<gpu> or defaults", Table: true},
	}
}

// ColumnInfos annotates cols (a table's columns, Columns or ColumnsWith):
// a fixed column from columnDocs, a swept setting's column from its
// setting (label = key, doc = its help, a setting, always shown), and anything else
// by its name alone, not shown.
func ColumnInfos(cols []string) []ColumnInfo {
	docs := columnDocs()
	out := make([]ColumnInfo, len(cols))
	for i, c := range cols {
		info, ok := docs[c]
		if !ok {
			info = ColumnInfo{Label: c}
			if s, err := workload.LookupSetting(c); err == nil {
				info = ColumnInfo{Label: c, Doc: s.Help, Table: true, Setting: true}
			}
		}
		info.Name = c
		out[i] = info
	}
	return out
}
