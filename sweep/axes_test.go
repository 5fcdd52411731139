package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/workload"
)

func TestParseAxis(t *testing.T) {
	good := []struct {
		in   string
		want Axis
	}{
		{"tp=1, 2,4", Axis{"tp", []string{"1", "2", "4"}}},
		{" weights = bf16,fp8 ", Axis{"weights", []string{"bf16", "fp8"}}},
		{"serving.gpu_memory_utilization=0.80,.9", Axis{"serving.gpu_memory_utilization", []string{"0.8", "0.9"}}},
		{"serving.enable_prefix_caching=true,0", Axis{"serving.enable_prefix_caching", []string{"true", "false"}}},
		{"tp=02", Axis{"tp", []string{"2"}}},
	}
	for _, tc := range good {
		got, err := ParseAxis(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseAxis(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct{ in, field, reason string }{
		{"tp=1,x", "tp", `want an integer, got "x"`},
		{"tp=1.5", "tp", `want an integer, got "1.5"`},
		{"serving.enable_prefix_caching=yes", "serving.enable_prefix_caching", `want true or false, got "yes"`},
		{"tp=", "tp", "empty list"},
		{"tp=2,2", "tp", "2 listed twice"},
		{"tp=2,02", "tp", "2 listed twice"},
		{"tp", "tp", "want KEY=V1,V2"},
		{"replicas=1,2", "replicas", "not swept"},
		{"router=round-robin", "router", "not swept"},
	}
	for _, tc := range bad {
		_, err := ParseAxis(tc.in)
		var ge *GridError
		if !errors.As(err, &ge) || ge.Field != tc.field || !strings.Contains(ge.Reason, tc.reason) {
			t.Errorf("ParseAxis(%q): %v; want a GridError on %s: %s", tc.in, err, tc.field, tc.reason)
		}
	}
	for in, close := range map[string]string{"max_num_seqs=1": "serving.max_num_seqs", "tpp=1": "tp", "weight=fp8": "weights", "block-size=16": "serving.block_size"} {
		_, err := ParseAxis(in)
		var ue *workload.UnknownSettingError
		if !errors.As(err, &ue) || !slices.Contains(ue.Close, close) {
			t.Errorf("ParseAxis(%q): %v; want an unknown setting suggesting %s", in, err, close)
		}
	}
	if _, err := ParseGrid([]string{"tp=1", "weights=fp8", "tp=2"}); err == nil || err.Error() != "tp: given twice" {
		t.Errorf("duplicate key: %v", err)
	}
}

// TestEverySettingSweepable: every setting of workload.Deployment, however
// it was added, is a grid key (but those a sweep leaves alone), routed to a
// typed list or a settings axis, and valid at its default value.
func TestEverySettingSweepable(t *testing.T) {
	def := workload.DefaultDeployment()
	base := smallOptions(t).Base
	for _, s := range workload.DeploymentSettings() {
		v, err := def.Get(s.Key)
		if err != nil {
			t.Fatal(err)
		}
		text := workload.Text(v)
		if text == "" {
			continue // "" (the model's precision, ...) is not listable in KEY=V1,V2
		}
		a, err := ParseAxis(s.Key + "=" + text)
		if Unswept(s.Key) != "" {
			if err == nil {
				t.Errorf("%s: a sweep does not vary it, yet ParseAxis accepted it", s.Key)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s=%s: %v", s.Key, text, err)
			continue
		}
		var g Grid
		if err := g.Set(a); err != nil {
			t.Errorf("%s: Set: %v", s.Key, err)
		}
		typed := s.Key == keyGPU || g.Ints(s.Key) != nil
		if typed == g.sweeps(s.Key) {
			t.Errorf("%s: typed list %v, settings axis %v; want exactly one", s.Key, typed, g.sweeps(s.Key))
		}
		if err := g.checkSettings(base.Settings); err != nil {
			t.Errorf("%s=%s at the defaults: %v", s.Key, text, err)
		}
	}
}

// TestGridCartesian: Configs is the cartesian product, in the index order
// of nested loops with the settings axes innermost (a naive reference).
func TestGridCartesian(t *testing.T) {
	g := Grid{GPUs: []string{"h100", "h200"}, TP: []int{1, 2}, DP: []int{1, 2}, MaxNumSeqs: []int{64}, MaxNumBatchedTokens: []int{2048, 8192},
		Settings: []Axis{{"weights", []string{"bf16", "fp8", "nvfp4"}}, {"serving.block_size", []string{"16", "32"}}}}
	var want []Config
	for _, gpu := range g.GPUs {
		for _, tp := range g.TP {
			for _, dp := range g.DP {
				for _, b := range g.MaxNumBatchedTokens {
					for _, w := range g.Settings[0].Values {
						for _, bs := range g.Settings[1].Values {
							want = append(want, Config{Index: len(want), GPU: gpu, TP: tp, DP: dp, EP: 1, MaxNumSeqs: 64, MaxNumBatchedTokens: b,
								Settings: []SettingValue{{"weights", w}, {"serving.block_size", bs}}})
						}
					}
				}
			}
		}
	}
	got := g.Configs()
	if g.Size() != 2*2*2*2*3*2 || !reflect.DeepEqual(got, want) {
		t.Errorf("size %d, configs differ from nested loops:\n%v\nwant\n%v", g.Size(), got, want)
	}
	for _, c := range got {
		if s := settingsFromIndex(g.Settings, c.Index); !reflect.DeepEqual(s, c.Settings) {
			t.Errorf("config %d: settings from index %v, want %v", c.Index, s, c.Settings)
		}
	}
	if (Grid{GPUs: []string{"h100"}, TP: []int{1}, MaxNumSeqs: []int{1}, MaxNumBatchedTokens: []int{1}, Settings: []Axis{{"weights", nil}}}).Size() != 0 {
		t.Error("an empty axis must empty the grid")
	}
}

// TestValidateGridSettings: settings axes are checked before anything runs.
func TestValidateGridSettings(t *testing.T) {
	for _, tc := range []struct {
		axes []Axis
		want string
	}{
		{[]Axis{{"weights", []string{"bf17"}}}, `weights: unknown precision "bf17"`},
		{[]Axis{{"serving.gpu_memory_utilization", []string{"0.5", "1.5"}}}, "serving.gpu_memory_utilization: 1.5: must be in (0, 1]"},
		{[]Axis{{"serving.block_size", []string{"3"}}}, "serving.block_size: 3: must be one of"},
		{[]Axis{{"tp", []string{"2"}}}, "tp: has its own list"},
		{[]Axis{{"weights", []string{"fp8"}}, {"weights", []string{"bf16"}}}, "weights: given twice"},
		{[]Axis{{"model", []string{"nope"}}}, `model: unknown model "nope"`},
		{[]Axis{{"weights", []string{"bf16", "BF16"}}}, "weights: BF16 listed twice (bf16 is the same, bf16)"},
		{[]Axis{{"nope", []string{"1"}}}, `unknown setting "nope"`},
	} {
		o := smallOptions(t)
		o.Grid.Settings = tc.axes
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.axes, err, tc.want)
		}
	}
}

// TestRunGridSettings: rows carry their swept settings, the settings reach
// the simulation (fp8 weights leave more memory for KV blocks than bf16),
// every table has a column per key, Parquet keeps the values through a
// shard merge, and a merge of different grids is refused.
func TestRunGridSettings(t *testing.T) {
	o := smallOptions(t)
	o.Grid.GPUs, o.Grid.TP = []string{"h100"}, []int{1}
	o.Grid.Settings = []Axis{{"weights", []string{"bf16", "fp8"}}, {"serving.gpu_memory_utilization", []string{"0.9"}}}
	o.Requests, o.Probes = 500, 3
	res, err := Run(context.Background(), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || !reflect.DeepEqual(res.Axes, o.Grid.Settings) {
		t.Fatalf("%d rows, axes %v", len(res.Rows), res.Axes)
	}
	for i, w := range []string{"bf16", "fp8"} {
		want := []SettingValue{{"weights", w}, {"serving.gpu_memory_utilization", "0.9"}}
		if !reflect.DeepEqual(res.Rows[i].Settings, want) {
			t.Errorf("row %d settings %v, want %v", i, res.Rows[i].Settings, want)
		}
	}
	if !(res.Rows[1].KVBlocks > res.Rows[0].KVBlocks) {
		t.Errorf("KV blocks bf16 %d, fp8 %d: fp8 weights must leave more", res.Rows[0].KVBlocks, res.Rows[1].KVBlocks)
	}
	recs, err := csv.NewReader(bytes.NewReader(csvOf(t, res))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	at := slices.Index(recs[0], "max_num_batched_tokens") + 1
	if !slices.Equal(recs[0][at:at+2], []string{"weights", "serving.gpu_memory_utilization"}) || recs[2][at] != "fp8" {
		t.Errorf("CSV header %v, row 1 %v", recs[0], recs[2])
	}
	if keys, ok := HeaderKeys(recs[0]); !ok || !slices.Equal(keys, o.Grid.Keys()) {
		t.Errorf("HeaderKeys: %v %v", keys, ok)
	}
	rows, err := JSONRows(res)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rows[1], []byte(`"weights":"fp8","serving.gpu_memory_utilization":0.9,`)) {
		t.Errorf("JSON row %s", rows[1])
	}
	// Shards through Parquet merge to the whole, settings included.
	var parts []*Result
	for i := range 2 {
		sh := o
		sh.Shard = Shard{Index: i, Count: 2}
		r, err := Run(context.Background(), sh, nil)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, parquetRoundTrip(t, r))
	}
	merged, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := csvOf(t, res), csvOf(t, merged); !bytes.Equal(a, b) {
		t.Errorf("merged shards differ from the whole:\n%s\n---\n%s", b, a)
	}
	other := *parts[1]
	other.Axes = []Axis{{"weights", []string{"bf16", "nvfp4"}}, {"serving.gpu_memory_utilization", []string{"0.9"}}}
	if _, err := Merge(parts[0], &other); err == nil {
		t.Error("merge of different grids accepted")
	}
	// The fingerprint covers the settings axes.
	f1, _ := o.Fingerprint()
	o.Grid.Settings[0].Values = []string{"bf16", "nvfp4"}
	if f2, _ := o.Fingerprint(); f1 == f2 {
		t.Error("fingerprint ignores the settings axes")
	}
	js, _ := json.Marshal(Grid{GPUs: []string{"h100"}})
	if bytes.Contains(js, []byte("Settings")) {
		t.Errorf("a grid without settings axes must marshal as before (fingerprints unchanged): %s", js)
	}
}
