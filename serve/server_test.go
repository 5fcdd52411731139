package serve

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/sweep"
	"github.com/roofsim/roofsim/traces"
)

func newTestServer(t *testing.T, o Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

// jsonText is a request body sent as is with Content-Type application/json
// (malformed JSON, for instance).
type jsonText string

// call sends body (a value marshalled to JSON, or raw bytes, with their
// Content-Type) and decodes
// the answer into out when out is non-nil; it returns the status.
func call(t *testing.T, ts *httptest.Server, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	ctype := mediaRaw
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	case jsonText:
		rd, ctype = strings.NewReader(string(b)), mediaJSON
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, ctype = bytes.NewReader(js), mediaJSON
	}
	req, err := http.NewRequest(method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %d %q: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

// wantError checks a 4xx answer with a JSON error containing substr.
func wantError(t *testing.T, ts *httptest.Server, method, path string, body any, status int, substr string) {
	t.Helper()
	var e errorBody
	if got := call(t, ts, method, path, body, &e); got != status {
		t.Errorf("%s %s: status %d, want %d (%q)", method, path, got, status, e.Error)
	}
	if !strings.Contains(e.Error, substr) {
		t.Errorf("%s %s: error %q does not mention %q", method, path, e.Error, substr)
	}
}

func TestCatalogEndpointsAndPage(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	var gpus []gpuEntry
	if call(t, ts, "GET", "/api/gpus", nil, &gpus) != 200 || len(gpus) != len(hardware.List()) {
		t.Fatalf("gpus: %d entries, want %d", len(gpus), len(hardware.List()))
	}
	var models []modelEntry
	if call(t, ts, "GET", "/api/models", nil, &models) != 200 || len(models) == 0 {
		t.Fatal("models: none")
	}
	var ex []exampleEntry
	call(t, ts, "GET", "/api/examples", nil, &ex)
	names := map[string]bool{}
	for _, e := range ex {
		names[e.Name] = true
	}
	if !names["chat"] || names["replay"] {
		t.Errorf("examples %v: want chat, and not replay (it names a trace file)", names)
	}
	resp, err := ts.Client().Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(page, []byte("Kernel Spot Check")) || resp.Header.Get("Content-Security-Policy") == "" {
		t.Error("index page: missing the spot check panel or the CSP header")
	}
	for _, p := range []string{"/vendor/uplot/uPlot.iife.min.js", "/vendor/uplot/LICENSE", "/app.js", "/style.css"} {
		r, err := ts.Client().Get(ts.URL + p)
		if err != nil || r.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", p, err, r.Status)
		}
		r.Body.Close()
	}
	wantError(t, ts, "GET", "/api/nope", nil, 404, "no such endpoint")
	wantError(t, ts, "DELETE", "/api/gpus", nil, 404, "no such endpoint")
}

func TestRooflineCeilingsAndPhases(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	var res rooflineResponse
	if st := call(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "h100", "model": "llama-3.1-8b", "prompt": 512, "gen": 64}, &res); st != 200 {
		t.Fatalf("status %d", st)
	}
	g, _ := hardware.Lookup("h100")
	if res.Memory.PeakBps != g.BandwidthBytesPerSec() || !(res.Memory.CalibratedBps > 0 && res.Memory.CalibratedBps <= res.Memory.PeakBps) {
		t.Errorf("memory roof %+v: want peak = catalog and 0 < calibrated <= peak", res.Memory)
	}
	seen := map[string]bool{}
	for _, c := range res.Ceilings {
		seen[c.Precision] = true
		if math.Abs(c.RidgePeak-c.PeakFLOPS/res.Memory.PeakBps) > 1e-9*c.RidgePeak || c.CalibratedFLOPS > c.PeakFLOPS {
			t.Errorf("ceiling %+v: ridge must be peak/bandwidth and calibrated <= peak", c)
		}
	}
	for _, p := range []string{"fp16", "bf16", "fp8", "int8"} {
		if !seen[p] {
			t.Errorf("no %s ceiling", p)
		}
	}
	if len(res.Phases) != 2 || res.Phases[0].Phase != "prefill" || res.Phases[1].Phase != "decode" {
		t.Fatalf("phases %+v", res.Phases)
	}
	pre, dec := res.Phases[0], res.Phases[1]
	if !(dec.AI < pre.AI) || dec.Bound != "memory-bound" {
		t.Errorf("decode (AI %g, %s) should sit left of prefill (AI %g) and be memory-bound", dec.AI, dec.Bound, pre.AI)
	}
	for _, ph := range res.Phases {
		if ph.AchievedFLOPS > ph.Attainable*(1+1e-9) {
			t.Errorf("%s: predicted %g FLOP/s above the roofline %g", ph.Phase, ph.AchievedFLOPS, ph.Attainable)
		}
	}
}

func TestRooflineUploadedGPUAndErrors(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	y := "name: mygpu\ndescription: test part\npeak_tflops: {fp16: 100, bf16: 100}\nmemory_bandwidth_gbps: 1000\nmemory_gib: 24\n"
	var res rooflineResponse
	if st := call(t, ts, "POST", "/api/roofline", map[string]any{"gpu_yaml": y}, &res); st != 200 {
		t.Fatalf("status %d", st)
	}
	if res.GPU.Name != "mygpu" || len(res.Ceilings) != 2 || res.Ceilings[0].RidgePeak != 100 {
		t.Errorf("uploaded GPU: %+v", res)
	}
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu_yaml": "name: x\npeak_tflops: {fp16: -1}\n"}, 400, "uploaded GPU YAML")
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "h900"}, 400, "gpu:")
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "/etc/passwd"}, 400, "gpu:")
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "h100", "model": "nope"}, 400, "model:")
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "h100", "bogus": 1}, 400, "unknown field")
	wantError(t, ts, "POST", "/api/roofline", jsonText("{"), 400, "body")
	wantError(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "h100", "model": "llama-3.1-8b", "tp": 3}, 400, "")
}

func TestSpotCheckAllPrecisions(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	all := []string{"fp16", "bf16", "fp8", "nvfp4", "mxfp4", "int8", "int4"}
	for _, shape := range [][3]int{{1, 4096, 4096}, {2048, 4096, 4096}, {4096, 4096, 4096}} {
		var res spotResponse
		req := map[string]any{"gpu": "h100", "m": shape[0], "n": shape[1], "k": shape[2], "precisions": all}
		if st := call(t, ts, "POST", "/api/spotcheck", req, &res); st != 200 {
			t.Fatalf("status %d", st)
		}
		if len(res.Points) != len(all) {
			t.Fatalf("%d points, want %d", len(res.Points), len(all))
		}
		ok := 0
		for _, p := range res.Points {
			switch p.Precision {
			case "nvfp4", "mxfp4":
				if p.Status != "unsupported" || !strings.Contains(p.Reason, "fp4") {
					t.Errorf("%s on h100: %s %q, want unsupported (no fp4 peak)", p.Precision, p.Status, p.Reason)
				}
				continue
			}
			if p.Status != "ok" {
				t.Errorf("%s: %s %s", p.Precision, p.Status, p.Reason)
				continue
			}
			ok++
			// Efficiencies are <= 1: no prediction beats the roofline.
			if p.PredictedTimeS < p.RooflineTimeS*(1-1e-12) || p.PredictedFLOPS > p.AttainableFLOPS*(1+1e-12) {
				t.Errorf("%s %v: predicted %g s / %g FLOP/s beats the roofline %g s / %g FLOP/s", p.Precision, shape, p.PredictedTimeS, p.PredictedFLOPS, p.RooflineTimeS, p.AttainableFLOPS)
			}
			if shape[0] == 1 && p.Bound != "memory-bound" {
				t.Errorf("GEMV %s: %s, want memory-bound", p.Precision, p.Bound)
			}
		}
		if ok < 5 {
			t.Errorf("%v: %d supported precisions on h100, want 5", shape, ok)
		}
		// Fewer bytes per weight: an fp8 GEMV moves half the fp16 bytes.
		if shape[0] == 1 && !(res.Points[2].Bytes < 0.6*res.Points[0].Bytes) {
			t.Errorf("fp8 GEMV bytes %g vs fp16 %g", res.Points[2].Bytes, res.Points[0].Bytes)
		}
	}
	var b200 spotResponse
	call(t, ts, "POST", "/api/spotcheck", map[string]any{"gpu": "b200", "m": 4096, "n": 4096, "k": 4096, "precisions": []string{"nvfp4", "mxfp4"}}, &b200)
	for _, p := range b200.Points {
		if p.Status != "ok" || p.ComputePrecision != "fp4" {
			t.Errorf("b200 %s: %s %s (%s), want ok at the fp4 peak", p.Precision, p.Status, p.Reason, p.ComputePrecision)
		}
	}
}

func TestSpotCheckBadInput(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxUploadBytes: 4096})
	good := func() map[string]any {
		return map[string]any{"gpu": "h100", "m": 1, "n": 4096, "k": 4096, "precisions": []string{"fp16"}}
	}
	cases := []struct {
		name   string
		mod    func(map[string]any)
		status int
		substr string
	}{
		{"zero m", func(r map[string]any) { r["m"] = 0 }, 400, "m: must be in"},
		{"huge k", func(r map[string]any) { r["k"] = 1 << 30 }, 400, "k: must be in"},
		{"unknown precision", func(r map[string]any) { r["precisions"] = []string{"fp3"} }, 400, "precisions[0]"},
		{"twice", func(r map[string]any) { r["precisions"] = []string{"fp16", "FP16"} }, 400, "twice"},
		{"none", func(r map[string]any) { r["precisions"] = []string{} }, 400, "precisions"},
		{"measure without agent", func(r map[string]any) { r["measure"] = true }, 400, "--measure-url"},
		{"string m", func(r map[string]any) { r["m"] = "1" }, 400, "body"},
		{"no gpu", func(r map[string]any) { delete(r, "gpu") }, 400, "gpu: required"},
	}
	for _, c := range cases {
		r := good()
		c.mod(r)
		t.Run(c.name, func(t *testing.T) { wantError(t, ts, "POST", "/api/spotcheck", r, c.status, c.substr) })
	}
	wantError(t, ts, "POST", "/api/spotcheck", map[string]any{"gpu_yaml": strings.Repeat("#", 5000)}, 413, "limit")
	wantError(t, ts, "POST", "/api/spotcheck", jsonText(`{"gpu":"h100"} {"gpu":"h100"}`), 400, "trailing")
	if call(t, ts, "POST", "/api/spotcheck", good(), nil) != 200 {
		t.Error("server did not recover after bad requests")
	}
}

// fakeAgent speaks the agent protocol: every precision but the fp4 ones
// takes timeS; fp4 is unsupported.
func fakeAgent(t *testing.T, timeS float64, protocol int) (*httptest.Server, *sync.Map) {
	seen := &sync.Map{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/info":
			json.NewEncoder(w).Encode(AgentInfo{Protocol: protocol, Agent: "fake", Device: "Fake GPU", Torch: "0"})
		case "/v1/gemm":
			var req GEMMRequest
			dec := json.NewDecoder(r.Body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil || req.M < 1 {
				w.WriteHeader(400)
				json.NewEncoder(w).Encode(errorBody{"bad request"})
				return
			}
			seen.Store(req.Precision, req)
			res := GEMMResult{Protocol: protocol, M: req.M, N: req.N, K: req.K, Precision: req.Precision, Device: "Fake GPU", Status: "ok", TimeS: timeS, Kernel: "fake"}
			if strings.HasSuffix(req.Precision, "fp4") {
				res.Status, res.TimeS, res.Reason = "unsupported", 0, "no fp4 here"
			}
			json.NewEncoder(w).Encode(res)
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(ts.Close)
	return ts, seen
}

func TestSpotCheckMeasuredAgainstFakeAgent(t *testing.T) {
	agent, seen := fakeAgent(t, 1e-3, AgentProtocol)
	_, ts := newTestServer(t, Options{MeasureURL: agent.URL})
	var info infoResponse
	call(t, ts, "GET", "/api/info", nil, &info)
	if info.MeasureURL != agent.URL {
		t.Errorf("info: measure url %q", info.MeasureURL)
	}
	var res spotResponse
	req := map[string]any{"gpu": "h100", "m": 2048, "n": 4096, "k": 4096, "precisions": []string{"fp16", "nvfp4", "int8"}, "measure": true}
	if st := call(t, ts, "POST", "/api/spotcheck", req, &res); st != 200 {
		t.Fatalf("status %d", st)
	}
	if res.Agent == nil || res.Agent.Device != "Fake GPU" {
		t.Errorf("agent info %+v", res.Agent)
	}
	for _, p := range res.Points {
		if _, ok := seen.Load(p.Precision); !ok {
			t.Errorf("%s was not sent to the agent", p.Precision)
		}
		m := p.Measured
		if m == nil {
			t.Fatalf("%s: no measurement", p.Precision)
		}
		if p.Precision == "nvfp4" {
			if m.Status != "unsupported" || m.Reason != "no fp4 here" {
				t.Errorf("nvfp4: %+v", m)
			}
			continue
		}
		wantErr := (p.PredictedTimeS - 1e-3) / 1e-3 * 100
		if m.Status != "ok" || m.TimeS != 1e-3 || math.Abs(float64(m.ErrorPct)-wantErr) > 1e-9 || math.Abs(m.AchievedFLOPS-p.FLOPs/1e-3) > 1e-6*m.AchievedFLOPS {
			t.Errorf("%s: measured %+v, want time 1e-3, error %.3f%%", p.Precision, m, wantErr)
		}
	}
	// A dead agent is a 502, not a crash.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	_, ts2 := newTestServer(t, Options{MeasureURL: deadURL})
	wantError(t, ts2, "POST", "/api/spotcheck", req, 502, "agent")
	// An agent speaking another protocol version is refused.
	other, _ := fakeAgent(t, 1e-3, 2)
	_, ts3 := newTestServer(t, Options{MeasureURL: other.URL})
	wantError(t, ts3, "POST", "/api/spotcheck", req, 502, "protocol 2")
}

func TestAgentClientChecksAnswers(t *testing.T) {
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(GEMMResult{Protocol: 1, M: 9, N: 9, K: 9, Precision: "fp16", Status: "ok", TimeS: 1})
	}))
	defer bad.Close()
	c := &AgentClient{BaseURL: bad.URL}
	if _, err := c.GEMM(context.Background(), GEMMRequest{M: 1, N: 2, K: 3, Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), "answered") {
		t.Errorf("mismatched answer: err %v", err)
	}
	zero := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(GEMMResult{Protocol: 1, M: 1, N: 2, K: 3, Precision: "fp16", Status: "ok"})
	}))
	defer zero.Close()
	c.BaseURL = zero.URL
	if _, err := c.GEMM(context.Background(), GEMMRequest{M: 1, N: 2, K: 3, Precision: "fp16"}); err == nil || !strings.Contains(err.Error(), "time_s") {
		t.Errorf("ok without a time: err %v", err)
	}
}

func TestMeasuredExampleMatchesDocs(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	for _, gpu := range measuredGPUs() {
		t.Run(gpu, func(t *testing.T) {
			name := gpu + "_spotcheck.csv"
			emb, err := assets.ReadFile("assets/measured/" + name)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := os.ReadFile("../docs/" + name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(emb, doc) {
				t.Fatalf("serve/assets/measured/%s differs from docs/%s; copy the docs file over", name, name)
			}
			var ex measuredExample
			if call(t, ts, "GET", "/api/measured-example?gpu="+gpu, nil, &ex) != 200 {
				t.Fatal("measured example failed")
			}
			if !strings.Contains(strings.ToLower(ex.Device), gpu) {
				t.Errorf("device %q is not an %s", ex.Device, gpu)
			}
			okRows := strings.Count(string(doc), ",ok,")
			measured := 0
			for _, p := range ex.Points {
				if p.Measured != nil && p.Measured.Status == "ok" && p.Status == "ok" {
					measured++
					if !(p.Measured.AchievedFLOPS > 0) || p.Measured.AchievedFLOPS > p.PeakFLOPS {
						t.Errorf("%s %dx%dx%d: measured %g FLOP/s outside (0, peak %g]", p.Precision, p.M, p.N, p.K, p.Measured.AchievedFLOPS, p.PeakFLOPS)
					}
				}
			}
			if measured != okRows || measured < 5 {
				t.Errorf("%d measured points, want the %d ok rows of the CSV", measured, okRows)
			}
		})
	}
	var def measuredExample
	if call(t, ts, "GET", "/api/measured-example", nil, &def) != 200 || def.GPU.Name != measuredGPUs()[0] {
		t.Errorf("default measured example is %q, want %q", def.GPU.Name, measuredGPUs()[0])
	}
	var e errorBody
	if st := call(t, ts, "GET", "/api/measured-example?gpu=t4", nil, &e); st != 400 || !strings.Contains(e.Error, "gpu:") {
		t.Errorf("unknown GPU: status %d, error %q; want 400 naming gpu", st, e.Error)
	}
}

// runJob starts a simulation and waits for it.
// testJob is a job as the page reads it: the result's summary is the flat
// result object, decoded by traces.DecodeResult.
type testJob struct {
	jobView
	Result *struct {
		simResult
		Summary json.RawMessage `json:"summary"`
	} `json:"result"`
}

// summary decodes the job's result summary (sim run's flat result).
func (j *testJob) summary(t *testing.T) *traces.FlatResult {
	t.Helper()
	fr, err := traces.DecodeResult(j.Result.Summary)
	if err != nil || fr.SchemaVersion != traces.ResultSchemaVersion {
		t.Fatalf("job summary is not the flat result (%v): %s", err, j.Result.Summary)
	}
	return fr
}

func runJob(t *testing.T, ts *httptest.Server, req map[string]any) testJob {
	t.Helper()
	var sr simulateResponse
	var e errorBody
	if st := call(t, ts, "POST", "/api/simulate", req, &sr); st != 200 {
		call(t, ts, "POST", "/api/simulate", req, &e)
		t.Fatalf("simulate: %d %s", st, e.Error)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var j testJob
		if st := call(t, ts, "GET", "/api/jobs/"+sr.ID, nil, &j); st != 200 {
			t.Fatalf("job status %d", st)
		}
		if j.State == jobDone || j.State == jobFailed {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 60 s", j.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func download(t *testing.T, ts *httptest.Server, id, file string) []byte {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + "/api/jobs/" + id + "/download/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("download %s: %s %s", file, resp.Status, b)
	}
	return b
}

func TestSimulateJobResultsAndDownloads(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	req := map[string]any{"example": "chat", "max_requests": 150, "gpu": "h100", "rate": 20}
	j := runJob(t, ts, req)
	if j.State != jobDone {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	r := j.Result
	c := r.Counters
	if !r.Capped || c.Arrived != 150 || c.Arrived != c.Completed+c.Rejected+c.InFlight {
		t.Errorf("counters %+v capped=%v: want 150 arrived = completed + rejected + in flight", c, r.Capped)
	}
	for name, cd := range map[string]cdf{"ttft": r.CDF.TTFT, "tpot": r.CDF.TPOT, "e2e": r.CDF.E2E} {
		if cd.N == 0 || cd.P[len(cd.P)-1] != 1 {
			t.Errorf("%s CDF: n %d, last p %v", name, cd.N, cd.P)
		}
		for i := 1; i < len(cd.X); i++ {
			if cd.X[i] < cd.X[i-1] || cd.P[i] < cd.P[i-1] {
				t.Fatalf("%s CDF not monotone at %d", name, i)
			}
		}
	}
	if r.CDF.TTFT.N != int(c.Completed) {
		t.Errorf("TTFT CDF over %d requests, want %d completed", r.CDF.TTFT.N, c.Completed)
	}
	tl := r.Timeline
	if len(tl.T) == 0 || tl.StepsInTrace != int(c.Steps) || tl.KVTotal != r.KVBlocks {
		t.Errorf("timeline: %d bins, %d steps (counter %d), kv total %d (want %d)", len(tl.T), tl.StepsInTrace, c.Steps, tl.KVTotal, r.KVBlocks)
	}
	var decoded float64
	for _, v := range tl.OutputTokS {
		decoded += v * tl.BinS
	}
	if sp := r.Split; !(sp.ComputeS+sp.MemoryS+sp.OverheadS > 0) {
		t.Errorf("split %+v: no time", sp)
	}
	// Downloads in `sim run --out` formats.
	reqs, err := traces.ReadRequests(bytes.NewReader(download(t, ts, j.ID, "requests.csv")), traces.CSV)
	if err != nil || int64(len(reqs)) != c.Completed+c.Rejected {
		t.Fatalf("requests.csv: %d rows (%v), want %d", len(reqs), err, c.Completed+c.Rejected)
	}
	steps, err := traces.ReadSteps(bytes.NewReader(download(t, ts, j.ID, "steps.parquet")), traces.Parquet)
	if err != nil || int64(len(steps)) != c.Steps {
		t.Fatalf("steps.parquet: %d rows (%v), want %d", len(steps), err, c.Steps)
	}
	var outTokens int
	for _, r := range reqs {
		if r.Status == traces.StatusOK {
			outTokens += r.OutputTokens
		}
	}
	if math.Abs(decoded-float64(outTokens)) > 1e-6*float64(outTokens) {
		t.Errorf("timeline output tokens %g, request trace %d", decoded, outTokens)
	}
	// The page's charts are the static plots' (sim plot run): the same
	// records streamed into a traces.RunProfile give the same series.
	prof := traces.NewRunProfile()
	for i := range reqs {
		prof.AddRequest(&reqs[i])
	}
	for i := range steps {
		prof.AddStep(&steps[i])
	}
	chartsAgree(t, prof.Charts(traces.ChartCDFPoints), &r.simResult)
	var run pipeline.Record
	if err := json.Unmarshal(download(t, ts, j.ID, "run.json"), &run); err != nil || run.Counters.Completed != c.Completed || run.Config.GPU != "h100" {
		t.Errorf("run.json: %v %+v", err, run.Counters)
	}
	// Its summary is sim run's: vllm bench serve's keys.
	var raw struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := json.Unmarshal(download(t, ts, j.ID, "run.json"), &raw); err != nil {
		t.Fatal(err)
	}
	if fr, err := traces.DecodeResult(raw.Summary); err != nil || fr.SchemaVersion != traces.ResultSchemaVersion || fr.Numbers["completed"] != float64(c.Completed) || fr.Numbers["mean_ttft_ms"] <= 0 {
		t.Errorf("run.json summary is not the flat result: %v %+v", err, fr)
	}
	// The page's summary is the same object.
	var a, b bytes.Buffer
	if err := json.Compact(&a, raw.Summary); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&b, j.Result.Summary); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("job summary differs from run.json's:\n%s\n%s", b.String(), a.String())
	}
	if s := j.summary(t); s.Numbers["completed"] != float64(c.Completed) || !(s.Numbers["p99_ttft_ms"] >= s.Numbers["median_ttft_ms"]) {
		t.Errorf("job summary %+v, counters %+v", s.Numbers, c)
	}
	zb := download(t, ts, j.ID, "run-jsonl.zip")
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "requests.jsonl,steps.jsonl,run.json" {
		t.Errorf("zip holds %v", names)
	}
	// Same request, same seed: byte-identical records.
	j2 := runJob(t, ts, req)
	if !bytes.Equal(download(t, ts, j.ID, "requests.csv"), download(t, ts, j2.ID, "requests.csv")) {
		t.Error("two identical runs gave different requests.csv")
	}
	for _, bad := range []string{"requests.xml", "other.csv", "run-xml.zip", "..%2f..%2fetc%2fpasswd"} {
		resp, err := ts.Client().Get(ts.URL + "/api/jobs/" + j.ID + "/download/" + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 404 {
			t.Errorf("download %s: %s, want 404", bad, resp.Status)
		}
	}
	wantError(t, ts, "GET", "/api/jobs/ffff", nil, 404, "unknown id")
}

func TestSimulateBadInput(t *testing.T) {
	_, ts := newTestServer(t, Options{MaxRequests: 500})
	wantError(t, ts, "POST", "/api/simulate", map[string]any{}, 400, "workload")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "../go.mod"}, 400, "example: unknown")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "replay"}, 400, "trace")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "max_requests": 501}, 400, "max_requests")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "model": "gpt-9"}, 400, "model:")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "rate": -1}, 400, "rate")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": "clients: [{name: a, prompt_tokens: {dist: empirical, file: /etc/passwd}}]"}, 400, "names another file")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": "clients:\n  - arrival: {rate: -5, num_requests: 3}\n"}, 400, "rate")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"workload_yaml": "model: /etc/passwd\nclients: [{arrival: {rate: 1, num_requests: 1}, prompt_tokens: {dist: constant, value: 8}, output_tokens: {dist: constant, value: 8}}]"}, 400, "model:")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "model": "llama-3.1-405b", "gpu": "t4"}, 400, "")
}

func TestSimulateStepCap(t *testing.T) {
	s, ts := newTestServer(t, Options{})
	s.maxSteps = 10
	j := runJob(t, ts, map[string]any{"example": "chat", "max_requests": 50})
	if j.State != jobFailed || !strings.Contains(j.Error, "more than 10 engine steps") {
		t.Errorf("job %s %q: want failed at the step cap", j.State, j.Error)
	}
}

func TestSimulateTimeoutKeepsServing(t *testing.T) {
	_, ts := newTestServer(t, Options{SimTimeout: time.Millisecond, MaxRequests: 20000})
	j := runJob(t, ts, map[string]any{"example": "chat"})
	if j.State != jobFailed || !strings.Contains(j.Error, "limit") {
		t.Errorf("job %s %q: want failed at the time limit", j.State, j.Error)
	}
	if call(t, ts, "GET", "/api/gpus", nil, nil) != 200 {
		t.Error("server stopped answering after a timed-out job")
	}
	var e errorBody
	if st := call(t, ts, "GET", "/api/jobs/"+j.ID+"/download/requests.csv", nil, &e); st != 409 {
		t.Errorf("download of a failed job: %d %q", st, e.Error)
	}
}

// writeSweepFiles writes a three-row sweep result as Parquet and CSV, with
// an SLO, a target rate of 40 req/s, its replicas and cost, and dp and ep 2
// on the last row.
func writeSweepFiles(t *testing.T, dir string) {
	t.Helper()
	res := &sweep.Result{Fingerprint: "f", GridSize: 3, Recommended: 1, SLO: "ttft_p99=500ms,tpot_p99=50ms"}
	for i := 0; i < 3; i++ {
		row := sweep.Row{Config: sweep.Config{Index: i, GPU: "h100", TP: 1 << i, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192},
			Fingerprint: "f", GridSize: 3, Status: sweep.StatusOK, MaxRateRPS: float64(10 * (i + 1)),
			OutputTokensPerSPerGPU: float64(1000 - 100*i), TokensPerSPerUser: float64(50 + 20*i), TTFTP99Ms: 100,
			Pareto: true, Recommended: i == 0, TargetRateRPS: 40, Replicas: 4 - i, GPUsTotal: (4 - i) << i,
			GPUCostPerHour: 2.5, CostPerHour: 2.5 * float64((4-i)<<i), CostMTok: 0.5 + float64(i)}
		if i == 2 {
			row.DP, row.EP = 2, 2
		}
		for _, f := range []*float64{&row.TTFTP50Ms, &row.TPOTP50Ms, &row.TPOTP99Ms, &row.TPOTMeanMs, &row.ITLP50Ms, &row.ITLP99Ms,
			&row.E2EP50Ms, &row.E2EP99Ms, &row.ThroughputRPS, &row.OutputTokensPerS, &row.OutputTokensPerRequest} {
			*f = math.NaN()
		}
		res.Rows = append(res.Rows, row)
	}
	var pq, cs bytes.Buffer
	if err := sweep.WriteParquet(&pq, res); err != nil {
		t.Fatal(err)
	}
	if err := sweep.WriteCSV(&cs, res); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sweep.parquet"), pq.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "sweep.csv"), cs.Bytes(), 0o644)
}

// writeGridSweepFile writes grid.csv: a sweep over dp and ep (both 2) and
// the --grid key weights (bf16, fp8).
func writeGridSweepFile(t *testing.T, dir string) {
	t.Helper()
	res := &sweep.Result{Fingerprint: "g", GridSize: 2, Recommended: -1, Axes: []sweep.Axis{{Key: "weights", Values: []string{"bf16", "fp8"}}}}
	for i, w := range []string{"bf16", "fp8"} {
		res.Rows = append(res.Rows, sweep.Row{Config: sweep.Config{Index: i, GPU: "h100", TP: 1, DP: 2, EP: 2, MaxNumSeqs: 256, MaxNumBatchedTokens: 8192,
			Settings: []sweep.SettingValue{{Key: "weights", Value: w}}}, Fingerprint: "g", GridSize: 2, Status: sweep.StatusSkipped, Reason: "test"})
	}
	var cs bytes.Buffer
	if err := sweep.WriteCSV(&cs, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "grid.csv"), cs.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSweepParquetCSVAndUpload(t *testing.T) {
	dir := t.TempDir()
	writeSweepFiles(t, dir)
	_, ts := newTestServer(t, Options{DataDir: dir})
	var fromPQ, fromCSV sweepResponse
	if st := call(t, ts, "POST", "/api/sweep?file=sweep.parquet", nil, &fromPQ); st != 200 {
		t.Fatalf("parquet: %d", st)
	}
	csvBytes, _ := os.ReadFile(filepath.Join(dir, "sweep.csv"))
	if st := call(t, ts, "POST", "/api/sweep", csvBytes, &fromCSV); st != 200 {
		t.Fatalf("csv upload: %d", st)
	}
	if len(fromPQ.SLO) != 2 || fromPQ.SLO[1].Key != "tpot_p99" || fromPQ.SLO[1].LimitMs != 50 || len(fromCSV.SLO) != 0 {
		t.Errorf("SLO: parquet %+v (want ttft_p99 500 ms, tpot_p99 50 ms), csv %+v (want none: CSV does not record it)", fromPQ.SLO, fromCSV.SLO)
	}
	for name, res := range map[string]sweepResponse{"parquet": fromPQ, "csv": fromCSV} {
		if len(res.Rows) != 3 {
			t.Fatalf("%s: %d rows", name, len(res.Rows))
		}
		if len(res.ColumnInfo) != len(res.Columns) {
			t.Fatalf("%s: %d column infos for %d columns", name, len(res.ColumnInfo), len(res.Columns))
		}
		for i, c := range res.ColumnInfo {
			if c.Name != res.Columns[i] || c.Label == "" {
				t.Errorf("%s: column_info[%d] = %+v for column %q", name, i, c, res.Columns[i])
			}
		}
		var rec []int
		for _, raw := range res.Rows {
			var row map[string]any
			if err := json.Unmarshal(raw, &row); err != nil {
				t.Fatal(err)
			}
			if row["recommended"] == true {
				rec = append(rec, int(row["index"].(float64)))
			}
			if row["ttft_p50_ms"] != nil || row["tp"] == nil {
				t.Errorf("%s row %v: NaN must be null, tp present", name, row)
			}
		}
		// Row 0 has the highest tokens/s per GPU: sweep.Recommend's pick.
		if len(rec) != 1 || rec[0] != 0 {
			t.Errorf("%s: recommended rows %v, want [0]", name, rec)
		}
	}
	wantError(t, ts, "POST", "/api/sweep", "a,b\n1,2\n", 400, "header")
	cols := sweep.Columns()
	swapped := append([]string{cols[1], cols[0]}, cols[2:]...)
	wantError(t, ts, "POST", "/api/sweep", strings.Join(swapped, ",")+"\n", 400, fmt.Sprintf("sweep upload:1: header: column 1 is %q, want %q", cols[1], cols[0]))
	wantError(t, ts, "POST", "/api/sweep", strings.Join(cols, ",")+"\n1,2\n", 400, "sweep upload:2:1: wrong number of fields")
	wantError(t, ts, "POST", "/api/sweep", "PAR1garbage-not-parquet", 400, "sweep upload")
	wantError(t, ts, "POST", "/api/sweep", "", 400, "empty")
}

func TestDataDirRefusesPathsOutside(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	os.Mkdir(data, 0o755)
	writeSweepFiles(t, data)
	secret := filepath.Join(base, "secret.json")
	os.WriteFile(secret, []byte(`{"secret": "do not show"}`), 0o644)
	os.WriteFile(filepath.Join(data, "report.json"), []byte(`{"rows": [{"gpu": "h100", "measured_ttft_ms": 10, "predicted_ttft_ms": 11}]}`), 0o644)
	if err := os.Symlink(secret, filepath.Join(data, "link.json")); err != nil {
		t.Fatal("cannot make the symlink this test needs:", err)
	}
	os.Symlink(base, filepath.Join(data, "up"))
	_, ts := newTestServer(t, Options{DataDir: data})
	for _, p := range []string{"../secret.json", "..%2Fsecret.json", "%2E%2E/secret.json", secret, "link.json", "up/secret.json", "sub/../../secret.json", "./../secret.json"} {
		var raw json.RawMessage
		st := call(t, ts, "POST", "/api/validate?file="+p, nil, &raw)
		leaks := bytes.Contains(raw, []byte("do not show")) || (!filepath.IsAbs(p) && bytes.Contains(raw, []byte(base)))
		if st < 400 || st >= 500 || leaks {
			t.Errorf("file=%s: %d %s: must be refused without revealing the file or the real path", p, st, raw)
		}
	}
	var ok validateResponse
	if st := call(t, ts, "POST", "/api/validate?file=report.json", nil, &ok); st != 200 || !bytes.Contains(ok.Report, []byte("predicted_ttft_ms")) {
		t.Errorf("report inside --data: %d %s", st, ok.Report)
	}
	var list []dataEntry
	call(t, ts, "GET", "/api/data", nil, &list)
	for _, e := range list {
		if strings.Contains(e.Path, "..") || filepath.IsAbs(e.Path) {
			t.Errorf("listing shows %q", e.Path)
		}
	}
	wantError(t, ts, "POST", "/api/validate", "not json", 400, "report")
	wantError(t, ts, "POST", "/api/validate", "[1,2]", 400, "report")
	_, none := newTestServer(t, Options{})
	wantError(t, none, "POST", "/api/sweep?file=sweep.csv", nil, 400, "without --data")
}

func TestPanicInHandlerIsA500(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := s.apiHandler(func(*http.Request) (any, error) { panic("boom") })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/x", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "boom") {
		t.Errorf("panic: %d %s", rec.Code, rec.Body)
	}
}

func TestConcurrentRequests(t *testing.T) {
	agent, _ := fakeAgent(t, 2e-5, AgentProtocol)
	_, ts := newTestServer(t, Options{MeasureURL: agent.URL, MaxJobs: 2, KeepJobs: 64})
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var spot spotResponse
			if st := call(t, ts, "POST", "/api/spotcheck", map[string]any{"gpu": "h200", "m": 1 + i, "n": 4096, "k": 4096,
				"precisions": []string{"fp16", "fp8", "int4"}, "measure": i%2 == 0}, &spot); st != 200 || len(spot.Points) != 3 {
				errs <- "spotcheck"
			}
			var rf rooflineResponse
			if st := call(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "a100", "model": "qwen3-8b", "prompt": 128, "gen": 8}, &rf); st != 200 {
				errs <- "roofline"
			}
			if st := call(t, ts, "POST", "/api/roofline", map[string]any{"gpu": "bad"}, nil); st != 400 {
				errs <- "bad roofline"
			}
			if i < 4 {
				if j := runJob(t, ts, map[string]any{"example": "closed_loop", "max_requests": 60}); j.State != jobDone {
					errs <- "job " + j.Error
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestServeShutsDownOnCancel(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/api/info")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("info: %v", err)
	}
	resp.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/api/info"); err == nil {
		t.Error("still answering after shutdown")
	}
	if !IsLoopback("127.0.0.1:8080") || !IsLoopback("[::1]:80") || !IsLoopback("localhost:1") || IsLoopback("0.0.0.0:8080") || IsLoopback(":8080") {
		t.Error("IsLoopback")
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{{MeasureURL: "ftp://x"}, {MeasureURL: "localhost:8765"}, {MaxUploadBytes: 10}, {MaxUploadBytes: 2 << 30}, {MaxRequests: -1}, {MaxRequests: 1e9}, {DataDir: "/nonexistent/dir"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): want an error", o)
		}
	}
}

func TestValidateStepPredictionsCSV(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	csv := "phase,workload_segment,sum_prefill_tokens,latency_ms,predicted_ms\ncontext,sweep,128,10.8,8.1\ngeneration,sweep,0,5.5,6\n"
	var res validateResponse
	if st := call(t, ts, "POST", "/api/validate", csv, &res); st != 200 {
		t.Fatalf("status %d", st)
	}
	var rep struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(res.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0]["measured_step_ms"] != 10.8 || rep.Rows[0]["predicted_step_ms"] != 8.1 || rep.Rows[1]["phase"] != "generation" {
		t.Errorf("rows %v", rep.Rows)
	}
	var odd validateResponse
	if st := call(t, ts, "POST", "/api/validate", "latency_ms,predicted_ms,\xff\n1,2,\"\xfe\"\n", &odd); st != 200 || !json.Valid(odd.Report) {
		t.Errorf("invalid UTF-8 in a CSV: %d %q", st, odd.Report)
	}
	wantError(t, ts, "POST", "/api/validate", "a,b\n1,2\n", 400, "latency_ms and predicted_ms")
	wantError(t, ts, "POST", "/api/validate", "latency_ms,predicted_ms\n1,x\n", 400, `report upload:2:3: predicted_ms: want a finite number, got "x"`)
}

func TestSimulateUploadedGPUAndWorkload(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	gpu := "name: mygpu\npeak_tflops: {bf16: 400, fp16: 400}\nmemory_bandwidth_gbps: 2000\nmemory_gib: 48\n"
	wl := "model: qwen3-8b\nseed: 7\nclients:\n  - arrival: {process: constant, rate: 4, num_requests: 40}\n    prompt_tokens: {dist: constant, value: 256}\n    output_tokens: {dist: constant, value: 32}\n"
	j := runJob(t, ts, map[string]any{"workload_yaml": wl, "gpu_yaml": gpu})
	if j.State != jobDone {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	c := j.Result.Counters
	if c.Completed != 40 || j.Result.Capped {
		t.Errorf("counters %+v capped %v: want all 40 completed", c, j.Result.Capped)
	}
	var run pipeline.Record
	if err := json.Unmarshal(download(t, ts, j.ID, "run.json"), &run); err != nil || run.Config.GPU != "mygpu" || run.Config.Model != "qwen3-8b" || run.Config.Seed != 7 {
		t.Errorf("run.json config %+v seed %d (%v)", run.Config, run.Config.Seed, err)
	}
	// A constant-length, constant-rate stream: every TTFT is finite and the
	// uploaded GPU's slower roofs give a longer TPOT than the H100's.
	h := runJob(t, ts, map[string]any{"workload_yaml": wl, "gpu": "h100"})
	jt, ht := j.summary(t).Numbers["mean_tpot_ms"], h.summary(t).Numbers["mean_tpot_ms"]
	if !(jt > ht) {
		t.Errorf("TPOT on the 2 TB/s part %.3f ms, on h100 %.3f ms: want slower", jt, ht)
	}
}

// chartsAgree fails t unless the page's result draws the series of ch.
func chartsAgree(t *testing.T, ch traces.RunCharts, r *simResult) {
	t.Helper()
	same := func(what string, want []float64, got []float64) {
		t.Helper()
		if len(want) != len(got) || len(want) == 0 {
			t.Errorf("%s: %d points on the page, %d in the plots' shaping", what, len(got), len(want))
			return
		}
		for i := range want {
			w, g := want[i], got[i]
			if math.IsNaN(w) {
				w = 0 // null on the page, decoded as 0
			}
			if math.Abs(w-g) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Errorf("%s[%d]: page %v, plots %v", what, i, g, w)
				return
			}
		}
	}
	fl := func(v []num) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	same("ttft cdf x", ch.TTFT.X, r.CDF.TTFT.X)
	same("ttft cdf p", ch.TTFT.P, r.CDF.TTFT.P)
	same("tpot cdf x", ch.TPOT.X, r.CDF.TPOT.X)
	same("e2e cdf x", ch.E2EL.X, r.CDF.E2E.X)
	tl := r.Timeline
	same("t", ch.T, tl.T)
	same("output tok/s", ch.OutputTokS, tl.OutputTokS)
	same("prefill tok/s", ch.PrefillTokS, tl.PrefillTokS)
	same("running", ch.Running, tl.Running)
	same("waiting", ch.Waiting, tl.Waiting)
	same("kv", ch.KVBlocks, fl(tl.KVUsed))
	same("step compute ms", ch.StepComputeMs, fl(r.Split.ComputeMs))
	same("step overhead ms", ch.StepOverheadMs, fl(r.Split.OverMs))
	if tl.BinS != ch.BinS || tl.KVTotal != ch.KVTotal || math.Abs(r.Split.ComputeS-ch.Total.Compute) > 1e-9 {
		t.Errorf("page: bin %v, kv total %d, compute %v s; plots: %v, %d, %v s", tl.BinS, tl.KVTotal, r.Split.ComputeS, ch.BinS, ch.KVTotal, ch.Total.Compute)
	}
}
