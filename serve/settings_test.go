package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/settings"
	"github.com/roofsim/roofsim/workload"
)

// jsonLeafKeys flattens the JSON form of v into dotted leaf keys: an
// account of the settings independent of the reflection over the tags.
func jsonLeafKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, x := range m {
			if sub, ok := x.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk("", doc)
	sort.Strings(out)
	return out
}

// TestSettingsEndpoint: GET /api/settings lists every leaf setting of the
// deployment (as its JSON form has them), with its default, type, help, the
// enumeration where one package owns the names and Validate's range.
func TestSettingsEndpoint(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	var got []settingInfo
	if st := call(t, ts, "GET", "/api/settings", nil, &got); st != 200 {
		t.Fatalf("status %d", st)
	}
	var keys []string
	byKey := map[string]settingInfo{}
	for _, s := range got {
		keys = append(keys, s.Key)
		byKey[s.Key] = s
		if s.Help == "" || s.Type == "" || s.Flag == "" {
			t.Errorf("%s: incomplete %+v", s.Key, s)
		}
	}
	sort.Strings(keys)
	def := workload.DefaultDeployment()
	// The JSON form omits a zero engine and a zero kv_offload; give them
	// values so that every leaf shows.
	full := def
	var err error
	if full.Engine, err = engine.Parse("vllm@0.12.0"); err != nil {
		t.Fatal(err)
	}
	// Nor does it show speculative decoding when off.
	sp := &full.Serving.Speculative
	sp.Method, sp.NumSpeculativeTokens, sp.AcceptanceRate, sp.MeanAcceptanceLength, sp.DraftModel = roofline.SpecDraftModel, 3, 0.5, 2, "llama-3.2-1b"
	// Nor does it show disaggregation's keys while they are zero.
	pool := settings.Pool{Replicas: 1, TP: 1, GPU: "h100", Router: routing.RoundRobin}
	full.Disaggregation = settings.Disaggregation{Prefill: pool, Decode: pool,
		KVTransfer: settings.KVTransfer{Link: settings.LinkRDMA, BandwidthGbps: 1, LatencyUS: 1}}
	full.Serving.KVOffload.CPUGiB = 1
	if want := jsonLeafKeys(t, full); !slices.Equal(keys, want) {
		t.Errorf("keys %v\nwant every leaf of the deployment %v", keys, want)
	}
	// Defaults are the deployment's, read back through the same keys.
	var flat map[string]any
	b, _ := json.Marshal(def)
	json.Unmarshal(b, &flat)
	if byKey["tp"].Default != flat["tp"] || byKey["serving.max_num_seqs"].Default != flat["serving"].(map[string]any)["max_num_seqs"] {
		t.Errorf("defaults tp %v max_num_seqs %v", byKey["tp"].Default, byKey["serving.max_num_seqs"].Default)
	}
	if s := byKey["serving.moe_kernel"]; !slices.Equal(s.Values, roofline.MoEKernels()) {
		t.Errorf("moe_kernel values %v, want %v", s.Values, roofline.MoEKernels())
	}
	if s := byKey["gpu"]; !slices.Contains(s.Values, "h100") || !byKey["gpu"].Sweep || byKey["replicas"].Sweep {
		t.Errorf("gpu %+v, replicas sweep %v", s, byKey["replicas"].Sweep)
	}
	if s := byKey["tp"]; s.Type != "int" || s.Min == nil || *s.Min != 1 || s.Max == nil || *s.Max < 8 {
		t.Errorf("tp %+v: want an int with a range from 1", s)
	}
	if s := byKey["serving.gpu_memory_utilization"]; s.Type != "float" || !s.MinExclusive || *s.Max != 1 {
		t.Errorf("gpu_memory_utilization %+v: want a float in (0, 1]", s)
	}
	if s := byKey["serving.enable_prefix_caching"]; s.Type != "bool" {
		t.Errorf("enable_prefix_caching type %q", s.Type)
	}
}

// TestSimulateSettings: a simulation takes deployment settings by key, as
// the generated form sends them; an unknown key or a bad value is a 400
// naming it.
func TestSimulateSettings(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxRequests: 200})
	j := runJob(t, ts, map[string]any{"example": "chat", "settings": map[string]string{"tp": "2", "replicas": "2", "serving.max_num_seqs": "32"}})
	if j.State != jobDone || j.Result.Replicas != 2 || !strings.Contains(j.Label, "tp2×2") {
		t.Errorf("job %s %q: replicas %d", j.State, j.Label, j.Result.Replicas)
	}
	var run struct {
		Config workload.Deployment `json:"config"`
	}
	if err := json.Unmarshal(download(t, ts, j.ID, "run.json"), &run); err != nil {
		t.Fatal(err)
	}
	if run.Config.Serving.MaxNumSeqs != 32 || run.Config.TP != 2 {
		t.Errorf("run.json config %+v", run.Config)
	}
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "settings": map[string]string{"max_num_seqs": "32"}}, 400, `unknown setting "max_num_seqs" (did you mean serving.max_num_seqs?)`)
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "settings": map[string]string{"tp": "two"}}, 400, `tp: want an integer, got "two"`)
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "settings": map[string]string{"serving.max_num_seqs": "0"}}, 400, "serving.max_num_seqs")
}

// TestSweepSettingColumns: a sweep over a --grid key, from CSV or Parquet,
// answers a column named by the key with each row's value; a setting column
// out of place is refused.
func TestSweepSettingColumns(t *testing.T) {
	dir := t.TempDir()
	writeGridSweepFile(t, dir)
	_, ts := newTestServer(t, Options{DataDir: dir})
	var res sweepResponse
	if st := call(t, ts, "POST", "/api/sweep?file=grid.csv", nil, &res); st != 200 {
		t.Fatalf("status %d", st)
	}
	if !slices.Contains(res.Columns, "weights") || len(res.Rows) != 2 {
		t.Fatalf("columns %v, %d rows", res.Columns, len(res.Rows))
	}
	var row map[string]any
	if err := json.Unmarshal(res.Rows[1], &row); err != nil {
		t.Fatal(err)
	}
	if row["weights"] != "fp8" || row["dp"] != 2.0 || row["ep"] != 2.0 {
		t.Errorf("row 1 %v: want weights fp8, dp 2, ep 2", row)
	}
	cols := slices.DeleteFunc(slices.Clone(res.Columns), func(c string) bool { return c == "weights" })
	wantError(t, ts, "POST", "/api/sweep", strings.Join(append(cols, "weights"), ",")+"\n", 400, fmt.Sprintf(`column %d is "weights", want nothing`, len(cols)+1))
}
