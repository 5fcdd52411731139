package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// loadExample reads examples/<name>.yaml.
func loadExample(t *testing.T, name string) *workload.Spec {
	t.Helper()
	sp, err := workload.Load("../examples/" + name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// runRecord resolves sp, runs it with a CSV request trace and returns
// run.json's bytes, the trace's bytes and the outcome.
func runRecord(t *testing.T, sp *workload.Spec, opts Options) ([]byte, []byte, *Outcome) {
	t.Helper()
	p, err := Resolve(sp, opts)
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	w, err := traces.NewRequestWriter(&csv, traces.CSV)
	if err != nil {
		t.Fatal(err)
	}
	o, err := p.Run(context.Background(), src, requestSink{w}, RunOptions{Goodput: traces.Goodput{TTFTms: 500}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := json.Marshal(p.Record(o, "test"))
	if err != nil {
		t.Fatal(err)
	}
	return rec, csv.Bytes(), o
}

// requestSink writes request records and drops steps.
type requestSink struct{ w traces.RequestWriter }

func (s requestSink) Request(r *traces.RequestRecord) error { return s.w.Write(r) }
func (requestSink) Step(*traces.StepRecord) error           { return nil }

// Same spec, same seed: identical run.json and request trace, byte for
// byte; another seed changes them.
func TestDeterminism(t *testing.T) {
	for _, name := range []string{"chat", "multiturn", "closed_loop"} {
		t.Run(name, func(t *testing.T) {
			a, ta, _ := runRecord(t, loadExample(t, name), Options{Workload: name + ".yaml"})
			b, tb, _ := runRecord(t, loadExample(t, name), Options{Workload: name + ".yaml"})
			if !bytes.Equal(a, b) || !bytes.Equal(ta, tb) {
				t.Fatalf("two runs of the same spec differ:\n%s\n%s", a, b)
			}
			sp := loadExample(t, name)
			sp.Seed++
			c, _, _ := runRecord(t, sp, Options{Workload: name + ".yaml"})
			if bytes.Equal(a, c) {
				t.Errorf("another seed gave the same run.json")
			}
		})
	}
}

// Every arrived request is completed, rejected or in flight at the cut-off,
// in the engine's counts, run.json's counters and the summary alike; the
// good requests are among the completed.
func TestConservation(t *testing.T) {
	sp := loadExample(t, "chat")
	rate := 40.0
	sp.Duration = workload.Duration(20 * time.Second) // cut the run while requests are in flight
	_, _, o := runRecord(t, sp, Options{Rate: &rate})
	r := o.Sim
	if r.Arrived == 0 || r.Arrived != r.Completed+r.Rejected+r.InFlight {
		t.Fatalf("arrived %d != completed %d + rejected %d + in flight %d", r.Arrived, r.Completed, r.Rejected, r.InFlight)
	}
	if r.InFlight == 0 {
		t.Errorf("a 20 s cut-off at 40 req/s left no request in flight")
	}
	if s := o.Result.Summary; int64(s.Completed) != r.Completed || int64(s.Rejected) != r.Rejected {
		t.Errorf("summary completed %d rejected %d, engine %d %d", s.Completed, s.Rejected, r.Completed, r.Rejected)
	}
	if g := o.Result.GoodRequests; g <= 0 || g > r.Completed {
		t.Errorf("good requests %d of %d completed", g, r.Completed)
	}
	if o.Result.MaxConcurrentRequests != r.PeakInSystem || o.Result.MaxConcurrentRequests > r.Arrived {
		t.Errorf("max concurrent %d, peak in system %d", o.Result.MaxConcurrentRequests, r.PeakInSystem)
	}
}

// A bad setting is an error naming it, found with errors.As.
func TestResolveErrorsNameTheSetting(t *testing.T) {
	var fe *workload.FieldError
	for _, c := range []struct {
		key string
		set func(sp *workload.Spec)
	}{
		{"tp", func(sp *workload.Spec) { sp.TP = 0 }},
		{"weights", func(sp *workload.Spec) { sp.Weights = "fp7" }},
		{"serving.max_model_len", func(sp *workload.Spec) { sp.Serving.MaxModelLen = 1 << 30 }},
	} {
		sp := loadExample(t, "chat")
		c.set(sp)
		_, err := Resolve(sp, Options{})
		if !errors.As(err, &fe) || fe.Key != c.key {
			t.Errorf("bad %s: %v, want a *workload.FieldError for it", c.key, err)
		}
	}
	for _, c := range []struct{ key, model, gpu string }{
		{"model", "no-such-model", "h100"},
		{"gpu", "llama-3.1-8b", "no-such-gpu"},
	} {
		sp := loadExample(t, "chat")
		sp.Model, sp.GPU = c.model, c.gpu
		_, err := Resolve(sp, Options{})
		var ce *CatalogError
		if !errors.As(err, &ce) || ce.Key != c.key {
			t.Errorf("%s %q: %v, want a *CatalogError for %s", c.key, c.model+c.gpu, err, c.key)
		}
	}
}

// A cancelled context stops the run with its cause and no outcome.
func TestRunCancelled(t *testing.T) {
	p, err := Resolve(loadExample(t, "chat"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := p.Source()
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	o, err := p.Run(ctx, src, nil, RunOptions{})
	if !errors.Is(err, stop) || o != nil {
		t.Errorf("cancelled run: %v, outcome %v", err, o)
	}
}

// run.json keeps the keys its readers use, with the schema version and
// kind, and the result carries the plan's notes and the profile label.
func TestRecordKeys(t *testing.T) {
	sp := loadExample(t, "chat")
	sp.Model, sp.GPU, sp.TP, sp.Weights = "qwen3-235b-a22b-fp8", "h200", 4, ""
	rec, _, _ := runRecord(t, sp, Options{Workload: "chat.yaml"})
	var m map[string]json.RawMessage
	if err := json.Unmarshal(rec, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "kind", "run_id", "version", "config", "kv_capacity", "summary", "counters"} {
		if _, ok := m[k]; !ok {
			t.Errorf("run.json lacks %q", k)
		}
	}
	for _, k := range []string{"endpoint", "client", "result", "files", "max_requests"} {
		if _, ok := m[k]; ok {
			t.Errorf("a simulated run.json has the observed key %q", k)
		}
	}
	var r Record
	if err := json.Unmarshal(rec, &r); err != nil {
		t.Fatal(err)
	}
	if r.SchemaVersion != RecordSchemaVersion || r.Kind != KindSimulated || r.Config.Workload != "chat.yaml" || r.Config.GPU != "h200" {
		t.Errorf("record %+v", r)
	}
	var sum struct {
		Notes   []string `json:"notes"`
		Profile string   `json:"gpu_profile"`
	}
	if err := json.Unmarshal(m["summary"], &sum); err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Notes) != 1 || sum.Profile != ProfileLabel(g.EffectiveProfile()) {
		t.Errorf("summary notes %q, profile %q: want the MoE kernel note and the profile label", sum.Notes, sum.Profile)
	}
}

// Engine builds the same engine configuration whichever caller prepares a
// deployment: at least one replica, the profile's front-end delay.
func TestEngine(t *testing.T) {
	p, err := Resolve(loadExample(t, "chat"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Engine(p.Prepared, 0, "")
	if cfg.Replicas != 1 || cfg.FrontendDelay != p.Prepared.FrontendDelay || cfg.Scheduler != p.Prepared.Scheduler {
		t.Errorf("engine %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}
