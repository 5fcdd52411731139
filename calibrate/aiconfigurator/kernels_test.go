package aiconfigurator

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/hardware"
)

func TestParseErrorsNameFileLineColumn(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad number", "m,n,k,gemm_dtype,latency\n1,2,3,bfloat16,0.1\n1,x,3,bfloat16,0.1\n", `g.csv:3:3: n: want an integer, got "x"`},
		{"negative latency", "m,n,k,gemm_dtype,latency\n1,2,3,bfloat16,-1\n", `g.csv:2:16: latency: must be > 0, got -1`},
		{"unknown dtype", "m,n,k,gemm_dtype,latency\n1,2,3,int3,1\n", `g.csv:2:7: gemm_dtype: unknown dtype "int3"`},
		{"missing column", "m,n,gemm_dtype,latency\n", `g.csv:1: missing required column "k"`},
		{"empty", "", `g.csv:1: empty file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseGEMM(strings.NewReader(tt.in), "g.csv")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func FuzzParseGEMM(f *testing.F) {
	f.Add([]byte("m,n,k,gemm_dtype,latency\n1,2,3,bfloat16,0.1\n"))
	f.Add([]byte("m,n,k,gemm_dtype,latency\n1,2,3,fp8,1e-3\n\"a"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseGEMM(bytes.NewReader(data), "f.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.M < 1 || r.N < 1 || r.K < 1 || !(r.LatencyMS > 0) || math.IsInf(r.LatencyMS, 0) {
				t.Fatalf("accepted invalid row %+v", r)
			}
			if c := kernels.GEMMCost(r); !(c.FLOPs > 0) {
				t.Fatalf("row %+v has cost %+v", r, c)
			}
		}
	})
}

// fixture writes a tiny kernels directory and returns its path.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		FileGEMM: "framework,m,n,k,gemm_dtype,latency\nX,1024,1024,1024,bfloat16,0.05\nX,1,1024,1024,bfloat16,0.004\n",
		FileContextAttention: "batch_size,isl,num_heads,num_key_value_heads,head_dim,attn_dtype,kv_cache_dtype,latency\n" +
			"1,1024,8,8,128,bfloat16,bfloat16,0.1\n",
		FileGenerationAttention: "batch_size,isl,num_heads,num_key_value_heads,head_dim,kv_cache_dtype,step,latency\n" +
			"2,1000,8,8,128,bfloat16,24,0.01\n",
		FileCustomAllReduce: "num_gpus,message_size,latency,backend\n2,500000,0.02,vllm_graph\n2,500000,0.001,vllm_eager\n",
		FileNCCL:            "op_name,num_gpus,message_size,latency\nall_reduce,2,500000,0.03\nall_gather,2,500000,0.0001\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fixtureGPU has round rates: 100 TFLOP/s bf16, 1000 GB/s, and a profile
// with constant efficiencies so that errors can be computed by hand.
func fixtureGPU() *hardware.GPU {
	p := hardware.DefaultProfile()
	p.GEMM = hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 1}, LaunchUS: 0}
	p.AttentionPrefill = hardware.OpEfficiency{Compute: hardware.Curve{Max: 0.5}, Memory: hardware.Curve{Max: 1}}
	p.AttentionDecode = hardware.OpEfficiency{Compute: hardware.Curve{Max: 1}, Memory: hardware.Curve{Max: 0.5}, LaunchUS: 2}
	p.AllReduce = hardware.AllReduce{LatencyUS: 10, BusBandwidthGBps: 100}
	return &hardware.GPU{Name: "fix", PeakTFLOPS: map[string]float64{"bf16": 100}, MemoryBandwidthGBps: 1000,
		MemoryGiB: 80, InterconnectGBps: 100, Profile: p}
}

func TestValidateKernelsHandChecked(t *testing.T) {
	rep, err := kernels.Validate(fixtureGPU(), Dir(fixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	// GEMM 1024^3: FLOPs 2^31 = 2.147483648e9 at 50 TFLOP/s = 42.95 us; bytes
	// (2^20 + 2*2^20)*2 = 6.29 MB at 1 TB/s = 6.29 us -> 42.95 us vs 50 us:
	// APE 14.1007%.
	// GEMM 1x1024x1024: FLOPs 2^21 at 50 TFLOP/s = 0.0419 us; bytes
	// (2^20 + 2048)*2 = 2101248 at 1 TB/s = 2.101 us vs 4 us: APE 47.47%.
	// Nearest-rank median of 2 is the smaller, p90 the larger.
	g1 := math.Abs(float64(1<<31)/50e12-50e-6) / 50e-6 * 100
	g2 := math.Abs(2101248/1e12-4e-6) / 4e-6 * 100
	// Prefill: keys sum 1024*1025/2 = 524800, FLOPs 4*8*128*524800 =
	// 2.1495e9 at 50 TFLOP/s = 42.99 us; bytes: Q,O 2*1024*8*128*2 = 4.19 MB,
	// KV 2*8*128*2*(1024+1024) = 8.39 MB -> 12.58 us. vs 100 us.
	pf := math.Abs(4*8*128*524800.0/50e12-100e-6) / 100e-6 * 100
	// Decode: 2 requests of 1024 keys: KV bytes 2*2048*8*128*2 = 8388608,
	// act 2*2*8*128*2 = 8192 -> 8396800 B at 0.5 TB/s = 16.79 us + 2 us
	// launch = 18.79 us vs 10 us.
	dc := math.Abs(8396800/0.5e12+2e-6-10e-6) / 10e-6 * 100
	// All-reduce 2 GPUs, 1e6 bytes: best of graph 20 us and NCCL 30 us
	// (eager ignored) = 20 us; model 10 us + 2*(1/2)*1e6/1e11 = 20 us: 0%.
	want := map[string][2]float64{
		"gemm_bf16":         {g1, g2},
		"attention_prefill": {pf, pf},
		"attention_decode":  {dc, dc},
		"allreduce_tp2":     {0, 0},
	}
	if len(rep.Families) != len(want) {
		t.Fatalf("families %+v, want %d", rep.Families, len(want))
	}
	for _, f := range rep.Families {
		w, ok := want[f.Family]
		if !ok {
			t.Errorf("unexpected family %q", f.Family)
			continue
		}
		if math.Abs(f.MedianAPE-w[0]) > 1e-6 || math.Abs(f.P90APE-w[1]) > 1e-6 {
			t.Errorf("%s: median %.6f p90 %.6f, want %.6f %.6f", f.Family, f.MedianAPE, f.P90APE, w[0], w[1])
		}
	}
	if math.Abs(g1-14.1007) > 1e-3 {
		t.Errorf("hand value g1 = %g, want 14.1007", g1)
	}
}

func TestReadKernelsMissing(t *testing.T) {
	if _, err := ReadKernels(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing dir error %v should name the path", err)
	}
	dir := fixture(t)
	os.Remove(filepath.Join(dir, FileContextAttention))
	if _, err := ReadKernels(dir); err == nil || !strings.Contains(err.Error(), FileContextAttention) {
		t.Errorf("missing table error %v should name %s", err, FileContextAttention)
	}
}

func TestCalibrateFixtureRoundTripsYAML(t *testing.T) {
	o := kernels.DefaultOptions()
	o.GPU, o.Restarts, o.Command = fixtureGPU(), 2, "sim calibrate --test"
	dir := fixture(t)
	res, err := kernels.Calibrate(Dir(dir), o)
	if err != nil {
		t.Fatal(err)
	}
	gemmSum, err := hardware.FileSHA256(filepath.Join(dir, FileGEMM))
	if err != nil {
		t.Fatal(err)
	}
	pv := res.Profile.Provenance
	if !res.Profile.Calibrated || res.Profile.Engine != Engine || len(pv) != 1 || pv[0].Stage != hardware.StageKernels ||
		pv[0].Command != "sim calibrate --test" || pv[0].Note != Provenance || len(pv[0].Data) == 0 ||
		pv[0].Data[0] != (hardware.DataFile{Path: filepath.Join(dir, FileGEMM), SHA256: gemmSum, Rows: 2}) {
		t.Errorf("profile metadata: calibrated %v engine %q provenance %+v", res.Profile.Calibrated, res.Profile.Engine, pv)
	}
	var few bool
	for _, w := range res.Warnings {
		few = few || strings.Contains(w, "rows (<")
	}
	if !few {
		t.Errorf("no too-few-rows warning in %q", res.Warnings)
	}
	data, err := calibrate.MarshalProfile(res.Profile)
	if err != nil {
		t.Fatal(err)
	}
	back, err := hardware.ParseProfile(data, "p.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if back.GEMMFor("bf16") != res.Profile.GEMMFor("bf16") || back.AttentionDecode != res.Profile.AttentionDecode ||
		back.AllReduce.ByGPUs[2] != res.Profile.AllReduce.ByGPUs[2] || !reflect.DeepEqual(back.Provenance, res.Profile.Provenance) {
		t.Errorf("profile YAML round trip differs:\n%s", data)
	}
	gdata, err := calibrate.MarshalGPU(res.GPU)
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.ParseGPU(gdata, "g.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, gdata)
	}
	if g.Profile == nil || g.Profile.AttentionPrefill != res.Profile.AttentionPrefill || g.MemoryBandwidthGBps != 1000 {
		t.Errorf("GPU YAML round trip differs:\n%s", gdata)
	}
}

// Families are fitted concurrently; the profile, the error table, the
// warnings and the progress reports' totals do not depend on how many at
// once.
func TestCalibrateIndependentOfWorkers(t *testing.T) {
	dir := fixture(t)
	run := func(workers int) (*kernels.Result, []int) {
		o := kernels.DefaultOptions()
		o.GPU, o.Restarts, o.Workers = fixtureGPU(), 2, workers
		var dones []int
		var mu sync.Mutex
		o.Progress = func(done, total int, _ string) {
			mu.Lock()
			defer mu.Unlock()
			dones = append(dones, done, total)
		}
		res, err := kernels.Calibrate(Dir(dir), o)
		if err != nil {
			t.Fatal(err)
		}
		return res, dones
	}
	a, da := run(1)
	b, db := run(4)
	pa, _ := calibrate.MarshalProfile(a.Profile)
	pb, _ := calibrate.MarshalProfile(b.Profile)
	// Families are compared as text: their empty hold-out statistics are NaN.
	if string(pa) != string(pb) || fmt.Sprint(a.Families) != fmt.Sprint(b.Families) || !reflect.DeepEqual(a.Warnings, b.Warnings) {
		t.Errorf("1 worker and 4 workers differ:\n%s\n%s\n%v\n%v\n%q\n%q", pa, pb, a.Families, b.Families, a.Warnings, b.Warnings)
	}
	if !reflect.DeepEqual(da, db) || len(da) < 4 || da[0] != 0 || da[len(da)-2] != da[len(da)-1] {
		t.Errorf("progress reports %v and %v: want 0 first, then 1..total in order, the same for both", da, db)
	}
}

// TestKernelPointsHandChecked: Points gives every fixture row (one per
// family here, except the two GEMMs) with the same errors Validate
// summarises, and perFamily thins a family to every n-th row.
func TestKernelPointsHandChecked(t *testing.T) {
	pts, err := kernels.Points(fixtureGPU(), Dir(fixture(t)), 10)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := kernels.Validate(fixtureGPU(), Dir(fixture(t)))
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]kernels.Point{}
	for _, p := range pts {
		byKind[p.Kind] = append(byKind[p.Kind], p)
		if !(p.MeasuredUS > 0) || !(p.PredictedUS > 0) {
			t.Errorf("%+v: times must be > 0", p)
		}
		if want := math.Abs(p.PredictedUS-p.MeasuredUS) / p.MeasuredUS * 100; math.Abs(p.APEPct-want) > 1e-9 {
			t.Errorf("%+v: APE %.9f, want %.9f", p, p.APEPct, want)
		}
	}
	for _, f := range rep.Families {
		ps := byKind[f.Family]
		if len(ps) != f.N {
			t.Fatalf("%s: %d points, Validate counted %d rows", f.Family, len(ps), f.N)
		}
		hi := 0.0
		for _, p := range ps {
			hi = math.Max(hi, p.APEPct)
		}
		if math.Abs(hi-f.P90APE) > 1e-6 { // p90 of at most two rows is the larger
			t.Errorf("%s: largest point APE %.6f, report p90 %.6f", f.Family, hi, f.P90APE)
		}
	}
	// The GEMM 1024^3 row measures 50 us.
	if g := byKind["gemm_bf16"]; len(g) != 2 || g[0].MeasuredUS != 50 && g[1].MeasuredUS != 50 {
		t.Errorf("gemm_bf16 points %+v, want the 50 us row among two", g)
	}
	one, err := kernels.Points(fixtureGPU(), Dir(fixture(t)), 1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(one); n != len(rep.Families) {
		t.Errorf("perFamily 1: %d points, want one per family (%d)", n, len(rep.Families))
	}
	if _, err := kernels.Points(fixtureGPU(), Dir(fixture(t)), 0); err == nil {
		t.Error("perFamily 0 accepted")
	}
}

// TestEngineFromMeta: the profile's engine names the vLLM version the
// collection metadata beside the tables names (B300's tables are 0.19.0,
// the others 0.14.0), and falls back to an explicit "not recorded".
func TestEngineFromMeta(t *testing.T) {
	dir := t.TempDir()
	if e, p := engineOf(dir); e != Engine || p != Provenance {
		t.Errorf("no meta: %q %q, want the not-recorded defaults", e, p)
	}
	os.MkdirAll(filepath.Join(dir, "meta"), 0o755)
	os.WriteFile(filepath.Join(dir, "meta", "comm_nccl_2.27_collection_meta.yaml"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "meta", "gemm_vllm_0.19.0_collection_meta.yaml"), nil, 0o644)
	if e, p := engineOf(dir); e != "vllm-0.19.0 kernels" || !strings.Contains(p, "vLLM 0.19.0") {
		t.Errorf("gemm 0.19.0 meta: %q %q", e, p)
	}
}
