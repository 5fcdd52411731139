package sweep

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/workload"
)

// tableRow is the Parquet schema of a Row, and through Columns the CSV one:
// one plain scalar column per field, optional (null) where not applicable.
// The column list is fixed and documented in docs/sweep.md; keep both in
// step.
type tableRow struct {
	Index                  int64    `parquet:"index"`
	Fingerprint            string   `parquet:"fingerprint,dict"`
	GridSize               int64    `parquet:"grid_size"`
	GPU                    string   `parquet:"gpu,dict"`
	TP                     int64    `parquet:"tp"`
	DP                     *int64   `parquet:"dp,optional"`
	EP                     *int64   `parquet:"ep,optional"`
	MaxNumSeqs             int64    `parquet:"max_num_seqs"`
	MaxNumBatchedTokens    int64    `parquet:"max_num_batched_tokens"`
	Status                 string   `parquet:"status,dict"`
	Reason                 *string  `parquet:"reason,optional"`
	KVBlocks               *int64   `parquet:"kv_blocks,optional"`
	Probes                 int64    `parquet:"probes"`
	MaxRateRPS             *float64 `parquet:"max_rate_rps,optional"`
	MaxConcurrency         *int64   `parquet:"max_concurrency,optional"`
	TTFTP50Ms              *float64 `parquet:"ttft_p50_ms,optional"`
	TTFTP99Ms              *float64 `parquet:"ttft_p99_ms,optional"`
	TPOTP50Ms              *float64 `parquet:"tpot_p50_ms,optional"`
	TPOTP99Ms              *float64 `parquet:"tpot_p99_ms,optional"`
	TPOTMeanMs             *float64 `parquet:"tpot_mean_ms,optional"`
	ITLP50Ms               *float64 `parquet:"itl_p50_ms,optional"`
	ITLP99Ms               *float64 `parquet:"itl_p99_ms,optional"`
	E2EP50Ms               *float64 `parquet:"e2e_p50_ms,optional"`
	E2EP99Ms               *float64 `parquet:"e2e_p99_ms,optional"`
	ThroughputRPS          *float64 `parquet:"throughput_rps,optional"`
	OutputTokensPerS       *float64 `parquet:"output_tokens_per_s,optional"`
	GoodputRPS             *float64 `parquet:"goodput_rps,optional"`
	OutputTokensPerSPerGPU *float64 `parquet:"output_tokens_per_s_per_gpu,optional"`
	TokensPerSPerUser      *float64 `parquet:"tokens_per_s_per_user,optional"`
	OutputTokensPerRequest *float64 `parquet:"output_tokens_per_request,optional"`
	TargetRateRPS          *float64 `parquet:"target_rate_rps,optional"`
	Replicas               *int64   `parquet:"replicas,optional"`
	GPUsTotal              *int64   `parquet:"gpus_total,optional"`
	GPUCostPerHour         *float64 `parquet:"gpu_cost_per_hour,optional"`
	CostPerHour            *float64 `parquet:"cost_per_hour,optional"`
	CostPerMTok            *float64 `parquet:"cost_per_mtok,optional"`
	Pareto                 bool     `parquet:"pareto"`
	Recommended            bool     `parquet:"recommended"`
	ProbeLog               string   `parquet:"probe_log"`
	// ProfileStatus is the last column, added after the others: a file
	// written before it has one column fewer and reads with it null.
	ProfileStatus *string `parquet:"profile_status,optional"`
}

// Columns returns the fixed column names of the result table, in order:
// those of a sweep whose grid sweeps no setting beyond its typed lists.
func Columns() []string {
	s := parquet.SchemaOf(tableRow{})
	out := make([]string, 0, len(s.Fields()))
	for _, f := range s.Fields() {
		out = append(out, f.Name())
	}
	return out
}

// settingsAt is the position of the swept settings' columns in a table:
// after the typed lists' (max_num_batched_tokens).
func settingsAt() int { return slices.Index(Columns(), "max_num_batched_tokens") + 1 }

// ColumnsWith returns the columns of a table whose grid sweeps the settings
// keys beyond its typed lists: Columns with a column per key, named by it,
// after max_num_batched_tokens.
func ColumnsWith(keys []string) []string {
	cols := Columns()
	at := settingsAt()
	return slices.Concat(cols[:at], keys, cols[at:])
}

// HeaderKeys returns the swept settings' keys of a table header written by
// WriteCSV (or the columns of JSONRows), and false when header is not one.
func HeaderKeys(header []string) ([]string, bool) {
	n := len(header) - len(Columns())
	if n < 0 {
		return nil, false
	}
	at := settingsAt()
	keys := header[at : at+n]
	for _, k := range keys {
		if _, err := workload.LookupSetting(k); err != nil {
			return nil, false
		}
	}
	return keys, slices.Equal(header, ColumnsWith(keys))
}

// Columns returns the columns of res's tables (ColumnsWith its Axes' keys).
func (r *Result) Columns() []string { return ColumnsWith(r.keys()) }

func (r *Result) keys() []string { return Grid{Settings: r.Axes}.Keys() }

// cells formats row i of r in the order of r.Columns.
func (r *Result) cells(i int) ([]string, error) {
	t, err := toTable(&r.Rows[i])
	if err != nil {
		return nil, err
	}
	c := t.cells()
	if len(r.Axes) == 0 {
		return c, nil
	}
	vals := make([]string, len(r.Axes))
	for k, a := range r.Axes {
		for _, sv := range r.Rows[i].Settings {
			if sv.Key == a.Key {
				vals[k] = sv.Value
			}
		}
	}
	at := settingsAt()
	return slices.Concat(c[:at], vals, c[at:]), nil
}

// settingsFromIndex recovers the swept settings of configuration index from
// the axes alone: they vary fastest (Grid.Configs), so they are the low
// digits of the index.
func settingsFromIndex(axes []Axis, index int) []SettingValue {
	if len(axes) == 0 {
		return nil
	}
	out := make([]SettingValue, len(axes))
	for k := len(axes) - 1; k >= 0; k-- {
		n := len(axes[k].Values)
		out[k] = SettingValue{Key: axes[k].Key, Value: axes[k].Values[index%n]}
		index /= n
	}
	return out
}

func optF(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func optI(x int) *int64 {
	if x == 0 {
		return nil
	}
	v := int64(x)
	return &v
}

func optS(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// getPos reads an optional positive value: 0 when absent.
func getPos(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func getF(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func getI(p *int64) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

// probeLog is a probe as stored in the probe_log column (JSON array).
type probeLog struct {
	RateRPS     float64  `json:"rate_rps"`
	Concurrency int      `json:"concurrency,omitempty"`
	Pass        bool     `json:"pass"`
	EarlyStop   bool     `json:"early_stop,omitempty"`
	TTFTP99Ms   *float64 `json:"ttft_p99_ms,omitempty"`
	TPOTP99Ms   *float64 `json:"tpot_p99_ms,omitempty"`
	ZeroLoad    bool     `json:"zero_load,omitempty"`
	Saturation  bool     `json:"saturation,omitempty"`
	SatRPS      *float64 `json:"saturation_rps,omitempty"`
	Failed      string   `json:"failed,omitempty"`
	// Burst and Rejected as in Probe.
	Burst    bool             `json:"burst,omitempty"`
	Rejected map[string]int64 `json:"rejected,omitempty"`
}

func toTable(r *Row) (tableRow, error) {
	logs := make([]probeLog, len(r.Probes))
	for i, p := range r.Probes {
		logs[i] = probeLog{RateRPS: p.RateRPS, Concurrency: p.Concurrency, Pass: p.Pass, EarlyStop: p.EarlyStop, TTFTP99Ms: optF(p.TTFTP99Ms), TPOTP99Ms: optF(p.TPOTP99Ms),
			ZeroLoad: p.ZeroLoad, Saturation: p.Saturation, Failed: p.Failed,
			Burst: p.Burst, Rejected: p.Rejected}
		if p.SaturationRPS > 0 {
			logs[i].SatRPS = optF(p.SaturationRPS)
		}
	}
	js, err := json.Marshal(logs)
	if err != nil {
		return tableRow{}, fmt.Errorf("row %d: probe_log: %w", r.Index, err)
	}
	t := tableRow{
		Index: int64(r.Index), Fingerprint: r.Fingerprint, GridSize: int64(r.GridSize), GPU: r.GPU,
		TP: int64(r.TP), DP: optLayout(r.DP), EP: optLayout(r.EP), MaxNumSeqs: int64(r.MaxNumSeqs), MaxNumBatchedTokens: int64(r.MaxNumBatchedTokens),
		Status: r.Status, Reason: optS(r.Reason), KVBlocks: optI(r.KVBlocks), Probes: int64(r.NumProbes),
		TTFTP50Ms: optF(r.TTFTP50Ms), TTFTP99Ms: optF(r.TTFTP99Ms),
		TPOTP50Ms: optF(r.TPOTP50Ms), TPOTP99Ms: optF(r.TPOTP99Ms), TPOTMeanMs: optF(r.TPOTMeanMs),
		ITLP50Ms: optF(r.ITLP50Ms), ITLP99Ms: optF(r.ITLP99Ms), E2EP50Ms: optF(r.E2EP50Ms), E2EP99Ms: optF(r.E2EP99Ms),
		ThroughputRPS: optF(r.ThroughputRPS), OutputTokensPerS: optF(r.OutputTokensPerS),
		GoodputRPS: optF(r.GoodputRPS), OutputTokensPerSPerGPU: optF(r.OutputTokensPerSPerGPU), TokensPerSPerUser: optF(r.TokensPerSPerUser),
		OutputTokensPerRequest: optF(r.OutputTokensPerRequest), TargetRateRPS: optF(r.TargetRateRPS),
		Replicas: optI(r.Replicas), GPUsTotal: optI(r.GPUsTotal), GPUCostPerHour: optF(r.GPUCostPerHour),
		CostPerHour: optF(r.CostPerHour), CostPerMTok: optF(r.CostMTok),
		Pareto: r.Pareto, Recommended: r.Recommended, ProbeLog: string(js), ProfileStatus: optS(r.ProfileStatus.String()),
	}
	if r.Status != StatusSkipped {
		t.MaxRateRPS = optF(r.MaxRateRPS)
	}
	t.MaxConcurrency = optI(r.MaxConcurrency)
	return t, nil
}

func fromTable(t *tableRow) (Row, error) {
	r := Row{
		Config: Config{Index: int(t.Index), GPU: t.GPU, TP: int(t.TP), DP: getLayout(t.DP), EP: getLayout(t.EP), MaxNumSeqs: int(t.MaxNumSeqs),
			MaxNumBatchedTokens: int(t.MaxNumBatchedTokens)},
		Fingerprint: t.Fingerprint, GridSize: int(t.GridSize), Status: t.Status, KVBlocks: getI(t.KVBlocks),
		NumProbes: int(t.Probes), MaxRateRPS: getF(t.MaxRateRPS), MaxConcurrency: getI(t.MaxConcurrency),
		TTFTP50Ms: getF(t.TTFTP50Ms), TTFTP99Ms: getF(t.TTFTP99Ms),
		TPOTP50Ms: getF(t.TPOTP50Ms), TPOTP99Ms: getF(t.TPOTP99Ms), TPOTMeanMs: getF(t.TPOTMeanMs),
		ITLP50Ms: getF(t.ITLP50Ms), ITLP99Ms: getF(t.ITLP99Ms), E2EP50Ms: getF(t.E2EP50Ms), E2EP99Ms: getF(t.E2EP99Ms),
		ThroughputRPS: getF(t.ThroughputRPS), OutputTokensPerS: getF(t.OutputTokensPerS),
		GoodputRPS: getF(t.GoodputRPS), OutputTokensPerSPerGPU: getF(t.OutputTokensPerSPerGPU), TokensPerSPerUser: getF(t.TokensPerSPerUser),
		OutputTokensPerRequest: getF(t.OutputTokensPerRequest), TargetRateRPS: getF(t.TargetRateRPS),
		Replicas: getI(t.Replicas), GPUsTotal: getI(t.GPUsTotal), GPUCostPerHour: getF(t.GPUCostPerHour),
		CostPerHour: getF(t.CostPerHour), CostMTok: getF(t.CostPerMTok),
		Pareto: t.Pareto, Recommended: t.Recommended,
	}
	if r.Status == StatusSkipped {
		r.MaxRateRPS = 0
	}
	if t.Reason != nil {
		r.Reason = *t.Reason
	}
	if t.ProfileStatus != nil {
		st, err := hardware.ParseProfileStatus(*t.ProfileStatus)
		if err != nil {
			return r, fmt.Errorf("row %d: profile_status: %w", t.Index, err)
		}
		r.ProfileStatus = st
	}
	var logs []probeLog
	if err := json.Unmarshal([]byte(t.ProbeLog), &logs); err != nil {
		return r, fmt.Errorf("row %d: probe_log: %w", t.Index, err)
	}
	for _, l := range logs {
		r.Probes = append(r.Probes, Probe{RateRPS: l.RateRPS, Concurrency: l.Concurrency, Pass: l.Pass, EarlyStop: l.EarlyStop,
			TTFTP99Ms: getF(l.TTFTP99Ms), TPOTP99Ms: getF(l.TPOTP99Ms), ZeroLoad: l.ZeroLoad, Saturation: l.Saturation,
			SaturationRPS: getPos(l.SatRPS), Failed: l.Failed,
			Burst: l.Burst, Rejected: l.Rejected})
	}
	return r, nil
}

// Parquet key-value metadata keys: the sweep's identity, kept even when a
// (partial or empty-shard) file has no rows.
const (
	metaFingerprint = "roofsim.sweep.fingerprint"
	metaGridSize    = "roofsim.sweep.grid_size"
	metaSLO         = "roofsim.sweep.slo"
	// metaInterrupted is "true" in the file of a sweep stopped before its
	// end (a signal): the rows it holds are valid, the others were not run.
	metaInterrupted = "roofsim.sweep.interrupted"
	// metaAxes is the grid's swept settings beyond its typed lists
	// (Result.Axes, JSON), absent when there are none: each row's values
	// follow from its index.
	metaAxes = "roofsim.sweep.axes"
)

// WriteParquet writes res as Parquet (snappy), one row per configuration in
// index order, with the columns of Columns. It does not close w.
func WriteParquet(w io.Writer, res *Result) error {
	rows := make([]tableRow, len(res.Rows))
	for i := range res.Rows {
		t, err := toTable(&res.Rows[i])
		if err != nil {
			return err
		}
		rows[i] = t
	}
	opts := []parquet.WriterOption{parquet.Compression(&snappy.Codec{}),
		parquet.CreatedBy("roofsim", "sweep", "none"),
		parquet.KeyValueMetadata(metaFingerprint, res.Fingerprint),
		parquet.KeyValueMetadata(metaGridSize, strconv.Itoa(res.GridSize))}
	if res.SLO != "" {
		opts = append(opts, parquet.KeyValueMetadata(metaSLO, res.SLO))
	}
	if res.Partial && res.Interrupted {
		opts = append(opts, parquet.KeyValueMetadata(metaInterrupted, "true"))
	}
	if len(res.Axes) > 0 {
		js, err := json.Marshal(res.Axes)
		if err != nil {
			return fmt.Errorf("parquet: axes: %w", err)
		}
		opts = append(opts, parquet.KeyValueMetadata(metaAxes, string(js)))
	}
	pw := parquet.NewGenericWriter[tableRow](w, opts...)
	if _, err := pw.Write(rows); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// ReadParquet reads a file written by WriteParquet. Every row must carry
// the fingerprint and grid size of the file's metadata. Pareto and recommendation flags are
// recomputed from the rows.
func ReadParquet(r io.ReaderAt, size int64) (res *Result, err error) {
	defer func() { // parquet-go panics on some malformed inputs
		if v := recover(); v != nil {
			res, err = nil, fmt.Errorf("parquet: malformed file: %v", v)
		}
	}()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	want := Columns()
	fields := f.Schema().Fields()
	if len(fields) == len(want)-1 {
		// Written before the profile_status column: the rows read with it
		// null (unknown).
		want = want[:len(want)-1]
	}
	if len(fields) != len(want) {
		return nil, fmt.Errorf("parquet: not a sweep result: %d columns, want %d", len(fields), len(want))
	}
	for i, fl := range fields {
		if fl.Name() != want[i] {
			return nil, fmt.Errorf("parquet: not a sweep result: column %d is %q, want %q", i, fl.Name(), want[i])
		}
	}
	pr := parquet.NewGenericReader[tableRow](f)
	defer pr.Close()
	buf := make([]tableRow, 256)
	res = &Result{}
	res.Fingerprint, _ = f.Lookup(metaFingerprint)
	res.SLO, _ = f.Lookup(metaSLO)
	if v, ok := f.Lookup(metaInterrupted); ok && v == "true" {
		res.Interrupted = true
	}
	if js, ok := f.Lookup(metaAxes); ok {
		if err := json.Unmarshal([]byte(js), &res.Axes); err != nil {
			return nil, fmt.Errorf("parquet: metadata %s: %w", metaAxes, err)
		}
		for _, a := range res.Axes {
			if len(a.Values) == 0 {
				return nil, fmt.Errorf("parquet: metadata %s: setting %q has no values", metaAxes, a.Key)
			}
		}
	}
	if g, ok := f.Lookup(metaGridSize); ok {
		if res.GridSize, err = strconv.Atoi(g); err != nil {
			return nil, fmt.Errorf("parquet: metadata %s: %q is not an integer", metaGridSize, g)
		}
	}
	for {
		n, rerr := pr.Read(buf)
		for i := 0; i < n; i++ {
			row, err := fromTable(&buf[i])
			if err != nil {
				return nil, err
			}
			if row.Index >= 0 {
				row.Settings = settingsFromIndex(res.Axes, row.Index)
			}
			res.Rows = append(res.Rows, row)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("parquet: %w", rerr)
		}
	}
	for i, row := range res.Rows {
		if row.Fingerprint != res.Fingerprint || row.GridSize != res.GridSize {
			return nil, fmt.Errorf("row %d: fingerprint %s / grid size %d differ from the file's (%s / %d)",
				i, row.Fingerprint, row.GridSize, res.Fingerprint, res.GridSize)
		}
	}
	res.finalize()
	res.Partial = len(res.Missing()) > 0
	return res, nil
}

// WriteCSV writes res as CSV with a header of Columns, one row per
// configuration; null values are empty, floats use the shortest exact
// decimal form, so equal results give identical bytes.
func WriteCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(res.Columns()); err != nil {
		return err
	}
	for i := range res.Rows {
		cells, err := res.cells(i)
		if err != nil {
			return err
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cells formats t in column order.
func (t *tableRow) cells() []string {
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	oi := func(p *int64) string {
		if p == nil {
			return ""
		}
		return i(*p)
	}
	of := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	os := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	b := strconv.FormatBool
	return []string{
		i(t.Index), t.Fingerprint, i(t.GridSize), t.GPU, i(t.TP), oi(t.DP), oi(t.EP), i(t.MaxNumSeqs), i(t.MaxNumBatchedTokens),
		t.Status, os(t.Reason), oi(t.KVBlocks), i(t.Probes), of(t.MaxRateRPS), oi(t.MaxConcurrency),
		of(t.TTFTP50Ms), of(t.TTFTP99Ms), of(t.TPOTP50Ms), of(t.TPOTP99Ms), of(t.TPOTMeanMs),
		of(t.ITLP50Ms), of(t.ITLP99Ms), of(t.E2EP50Ms), of(t.E2EP99Ms),
		of(t.ThroughputRPS), of(t.OutputTokensPerS), of(t.GoodputRPS), of(t.OutputTokensPerSPerGPU), of(t.TokensPerSPerUser),
		of(t.OutputTokensPerRequest), of(t.TargetRateRPS), oi(t.Replicas), oi(t.GPUsTotal),
		of(t.GPUCostPerHour), of(t.CostPerHour), of(t.CostPerMTok), b(t.Pareto), b(t.Recommended), t.ProbeLog, os(t.ProfileStatus),
	}
}

// JSONRows returns the rows as ordered column/value pairs for JSON output
// (null where not applicable, probe_log as an array).
func JSONRows(res *Result) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(res.Rows))
	cols := res.Columns()
	keys := res.keys()
	for k := range res.Rows {
		cells, err := res.cells(k)
		if err != nil {
			return nil, err
		}
		var buf []byte
		buf = append(buf, '{')
		for j, c := range cols {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendQuote(buf, c)
			buf = append(buf, ':')
			if slices.Contains(keys, c) {
				buf = append(buf, settingJSON(c, cells[j])...)
			} else {
				buf = append(buf, jsonCell(c, cells[j])...)
			}
		}
		buf = append(buf, '}')
		out = append(out, buf)
	}
	return out, nil
}

func jsonCell(col, cell string) []byte {
	switch col {
	case "fingerprint", "gpu", "status", "reason", "profile_status":
		if cell == "" && (col == "reason" || col == "profile_status") {
			return []byte("null")
		}
		return strconv.AppendQuote(nil, cell)
	case "probe_log":
		return []byte(cell)
	}
	if cell == "" {
		return []byte("null")
	}
	return []byte(cell)
}

// settingJSON is a swept setting's value in JSON: a string setting's
// quoted, a number's or a boolean's as its canonical text.
func settingJSON(key, cell string) []byte {
	if s, err := workload.LookupSetting(key); err == nil && s.TypeName() != "string" && cell != "" {
		return []byte(cell)
	}
	return strconv.AppendQuote(nil, cell)
}

// optLayout is a DP or EP degree as an optional column: null when off (1).
func optLayout(n int) *int64 {
	if n <= 1 {
		return nil
	}
	v := int64(n)
	return &v
}

// getLayout reads optLayout back: 1 when null.
func getLayout(p *int64) int {
	if p == nil {
		return 1
	}
	return int(*p)
}
