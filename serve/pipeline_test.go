package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/roofsim/roofsim/examples"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/workload"
)

// The web view is an adapter of the run pipeline: an example's job has the
// library's summary (the one sim run prints) and its run.json is the
// library's record with the request cap.
func TestSimulateMatchesPipeline(t *testing.T) {
	_, ts := newTestServer(t, DefaultOptions())
	j := runJob(t, ts, map[string]any{"example": "chat"})
	if j.State != jobDone {
		t.Fatalf("job %s: %s", j.State, j.Error)
	}
	data, err := examples.FS.ReadFile("chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := workload.Parse(data, "chat.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Resolve(sp, pipeline.Options{Workload: "chat.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	// The web view keeps the step trace (the engine then counts every step's
	// events; the summary is the same either way).
	o, err := p.Run(context.Background(), src, nil, pipeline.RunOptions{StepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(o.Result)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := json.Compact(&got, j.Result.Summary); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("job summary differs from the pipeline's result:\n%s\n%s", got.Bytes(), want)
	}
	rec := p.Record(o, "")
	rec.MaxRequests = DefaultOptions().MaxRequests
	var wantRec bytes.Buffer
	if err := writeRunJSON(&wantRec, &rec); err != nil {
		t.Fatal(err)
	}
	if gotRec := download(t, ts, j.ID, "run.json"); !bytes.Equal(gotRec, wantRec.Bytes()) {
		t.Errorf("run.json differs from the pipeline's record:\n%s\n%s", gotRec, wantRec.Bytes())
	}
}

// The web view's deployment overrides have the library's limits
// (internal/limits), with errors naming the setting.
func TestSimulateLimitsAreTheLibrarys(t *testing.T) {
	_, ts := newTestServer(t, DefaultOptions())
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "tp": limits.MaxTP + 1}, 400, "tp:")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "tp": -1}, 400, "tp:")
	wantError(t, ts, "POST", "/api/simulate", map[string]any{"example": "chat", "replicas": limits.MaxReplicas + 1}, 400, "replicas:")
	// Above the literal 64 the web view used to cap at, within the library's.
	j := runJob(t, ts, map[string]any{"example": "chat", "replicas": 65, "max_requests": 200})
	if j.State != jobDone || j.Result.Replicas != 65 {
		t.Errorf("65 replicas: %s %s", j.State, j.Error)
	}
}
