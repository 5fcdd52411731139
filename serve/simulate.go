package serve

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/roofsim/roofsim/examples"
	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/pipeline"
	"github.com/roofsim/roofsim/traces"
	"github.com/roofsim/roofsim/workload"
)

// simulateRequest starts a bounded simulation: an example workload or an
// uploaded workload YAML, with optional overrides of its deployment.
type simulateRequest struct {
	Example      string `json:"example"`
	WorkloadYAML string `json:"workload_yaml"`
	gpuRef
	Model    string  `json:"model"`
	TP       int     `json:"tp"`
	Replicas int     `json:"replicas"`
	Rate     float64 `json:"rate"`
	// MaxRequests caps the requests generated (<= the server's cap;
	// 0 means the server's cap).
	MaxRequests int     `json:"max_requests"`
	Seed        *uint64 `json:"seed"`
	Label       string  `json:"label"`
	// Settings override deployment settings by key, in text form
	// (GET /api/settings lists them); model, tp and replicas above win.
	Settings map[string]string `json:"settings"`
}

type exampleEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	YAML        string `json:"yaml"`
}

// handleExamples lists the example workloads (those that need no other
// file: a replayed trace is not offered).
func (s *Server) handleExamples(*http.Request) (any, error) {
	names, err := fs.Glob(examples.FS, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []exampleEntry
	for _, n := range names {
		data, err := examples.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		if referencesFiles(data) != "" {
			continue
		}
		desc := ""
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			desc += strings.TrimSpace(strings.TrimPrefix(line, "#")) + " "
		}
		out = append(out, exampleEntry{Name: strings.TrimSuffix(n, ".yaml"), Description: strings.TrimSpace(desc), YAML: string(data)})
	}
	return out, nil
}

// referencesFiles returns the first key of a workload YAML that names
// another file (trace, file); such workloads are refused, since the
// server reads no file outside --data. "" when none.
func referencesFiles(data []byte) string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return ""
	}
	var walk func(n *yaml.Node) string
	walk = func(n *yaml.Node) string {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i].Value; k == "trace" || k == "file" {
					return k
				}
			}
		}
		for _, c := range n.Content {
			if k := walk(c); k != "" {
				return k
			}
		}
		return ""
	}
	return walk(&root)
}

// parseWorkload returns the example or uploaded workload.
func parseWorkload(req *simulateRequest) (*workload.Spec, string, error) {
	var data []byte
	var name string
	switch {
	case len(req.WorkloadYAML) > limits.MaxWorkloadBytes:
		return nil, "", errorf(http.StatusRequestEntityTooLarge, "workload_yaml: %d bytes, more than the %d-byte limit", len(req.WorkloadYAML), limits.MaxWorkloadBytes)
	case strings.TrimSpace(req.WorkloadYAML) != "":
		data, name = []byte(req.WorkloadYAML), "uploaded.yaml"
	case req.Example != "":
		if strings.ContainsAny(req.Example, "/\\.") {
			return nil, "", errorf(http.StatusBadRequest, "example: unknown %q", req.Example)
		}
		var err error
		name = req.Example + ".yaml"
		if data, err = examples.FS.ReadFile(name); err != nil {
			return nil, "", errorf(http.StatusBadRequest, "example: unknown %q", req.Example)
		}
	default:
		return nil, "", errorf(http.StatusBadRequest, "workload: give an example name or workload_yaml")
	}
	if k := referencesFiles(data); k != "" {
		return nil, "", errorf(http.StatusBadRequest, "workload: %q names another file; the web view runs self-contained workloads only (use sim run for traces and length tables)", k)
	}
	sp, err := workload.Parse(data, name)
	if err != nil {
		return nil, "", badRequest(err)
	}
	return sp, name, nil
}

// plan is a resolved simulation: the pipeline's plan, its request source
// (capped at total requests) and the run.json every download carries.
type plan struct {
	*pipeline.Plan
	gen    *workload.Generator
	total  int
	capped bool
	// source names the workload ("chat.yaml", "uploaded.yaml").
	source string
	// maxRequests is the request cap the job ran under.
	maxRequests int
}

func (s *Server) resolvePlan(req *simulateRequest) (*plan, error) {
	if req.MaxRequests < 0 || req.MaxRequests > s.opts.MaxRequests {
		return nil, errorf(http.StatusBadRequest, "max_requests: must be in [1, %d], got %d", s.opts.MaxRequests, req.MaxRequests)
	}
	if req.MaxRequests == 0 {
		req.MaxRequests = s.opts.MaxRequests
	}
	if req.Rate < 0 || req.Rate != req.Rate {
		return nil, errorf(http.StatusBadRequest, "rate: must be > 0, got %g", req.Rate)
	}
	sp, src, err := parseWorkload(req)
	if err != nil {
		return nil, err
	}
	if sp.Trace != "" {
		return nil, errorf(http.StatusBadRequest, "workload: trace replay is not offered in the web view")
	}
	if err := checkUpfront(sp, s.opts.MaxRequests); err != nil {
		return nil, err
	}
	if err := applySettings(&sp.Deployment, req.Settings); err != nil {
		return nil, err
	}
	// Overrides of the workload's deployment: 0 (or "") keeps its value;
	// ranges are the library's (Deployment.Validate, internal/limits).
	if req.Model != "" {
		sp.Model = req.Model
	}
	if req.TP != 0 {
		sp.TP = req.TP
	}
	if req.Replicas != 0 {
		sp.Replicas = req.Replicas
	}
	if req.Seed != nil {
		sp.Seed = *req.Seed
	}
	if err := sp.Deployment.Validate(); err != nil {
		return nil, badRequest(err)
	}
	ref := req.gpuRef
	if ref.GPU == "" && strings.TrimSpace(ref.GPUYAML) == "" {
		ref.GPU = sp.GPU
	}
	g, err := ref.resolve()
	if err != nil {
		return nil, err
	}
	m, err := lookupModel(sp.Model)
	if err != nil {
		return nil, err
	}
	opts := pipeline.Options{Model: m, GPU: g, Workload: src}
	if req.Rate > 0 {
		opts.Rate = &req.Rate
	}
	pp, err := pipeline.Resolve(sp, opts)
	if err != nil {
		return nil, badRequest(err)
	}
	gen, err := pp.Source()
	if err != nil {
		return nil, badRequest(err)
	}
	total, known := gen.Totals()
	p := &plan{Plan: pp, gen: gen, source: src, maxRequests: req.MaxRequests}
	if !known || total > req.MaxRequests {
		total, p.capped = req.MaxRequests, true
	}
	p.total = total
	return p, nil
}

// checkUpfront refuses a workload whose generator would allocate more
// than maxRequests (the server's --max-requests) items before the first
// request: one state per client, one segment per shared-prefix group, one
// start per closed-loop user. No simulation here serves more than
// maxRequests requests, so a larger count only costs memory (30,000
// clients of a million users each would take hundreds of GB); the error
// names the field that passes the cap.
func checkUpfront(sp *workload.Spec, maxRequests int) error {
	if n := len(sp.Clients); n > maxRequests {
		return errorf(http.StatusBadRequest, "clients: %d clients, more than the %d requests a simulation may generate here (--max-requests)", n, maxRequests)
	}
	groups, users := 0, 0
	for i := range sp.Clients {
		c := &sp.Clients[i]
		if c.Prefix != nil {
			if groups += c.Prefix.Groups; groups > maxRequests {
				return errorf(http.StatusBadRequest, "clients[%d].prefix.groups: the clients' prefix groups add up to more than the %d requests a simulation may generate here (--max-requests)", i, maxRequests)
			}
		}
		if users += c.Concurrency; users > maxRequests {
			return errorf(http.StatusBadRequest, "clients[%d].concurrency: the clients' concurrency adds up to more than the %d requests a simulation may generate here (--max-requests)", i, maxRequests)
		}
	}
	return nil
}

type simulateResponse struct {
	ID    string `json:"id"`
	Total int    `json:"total"`
}

func (s *Server) handleSimulate(r *http.Request) (any, error) {
	var req simulateRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	p, err := s.resolvePlan(&req)
	if err != nil {
		return nil, err
	}
	label := req.Label
	if label == "" {
		c := &p.Settings
		label = fmt.Sprintf("%s · %s · %s tp%d×%d", strings.TrimSuffix(p.source, ".yaml"), c.Model, c.GPU, c.TP, c.Replicas)
		if req.Rate > 0 {
			label += fmt.Sprintf(" · %g req/s", req.Rate)
		}
	}
	if len(label) > 200 {
		label = label[:200]
	}
	j, err := s.jobs.add(label)
	if err != nil {
		return nil, err
	}
	j.total.Store(int64(p.total))
	s.jobs.run(s.ctx, j, s.opts.SimTimeout, func(ctx context.Context, j *job) error { return s.runPlan(ctx, j, p) })
	return simulateResponse{ID: j.id, Total: p.total}, nil
}

// cappedSource stops generating after max requests (arrivals and
// closed-loop follow-ups together).
type cappedSource struct {
	src  pipeline.Source
	left int
}

func (c *cappedSource) ClientNames() []string { return c.src.ClientNames() }

func (c *cappedSource) NextArrival() (workload.Request, bool) {
	if c.left <= 0 {
		return workload.Request{}, false
	}
	r, ok := c.src.NextArrival()
	if ok {
		c.left--
	}
	return r, ok
}

func (c *cappedSource) OnComplete(r workload.Request, finishNS int64) (workload.Request, bool) {
	nr, ok := c.src.OnComplete(r, finishNS)
	if !ok || c.left <= 0 {
		return workload.Request{}, false
	}
	c.left--
	return nr, true
}

// memSink keeps the records, at most maxSteps steps.
type memSink struct {
	requests []traces.RequestRecord
	steps    []traces.StepRecord
	maxSteps int
}

// maxStepsPerJob caps a job's step trace (about 100 bytes a step, so 50 MB).
const maxStepsPerJob = 500_000

func (m *memSink) tooManySteps() error {
	return fmt.Errorf("simulate: the run took more than %d engine steps; lower max_requests", m.maxSteps)
}

func (m *memSink) Request(r *traces.RequestRecord) error {
	m.requests = append(m.requests, *r)
	return nil
}

func (m *memSink) Step(r *traces.StepRecord) error {
	if len(m.steps) >= m.maxSteps {
		return m.tooManySteps()
	}
	m.steps = append(m.steps, *r)
	return nil
}

func (s *Server) runPlan(ctx context.Context, j *job, p *plan) error {
	sink := &memSink{maxSteps: s.maxSteps}
	out, err := p.Run(ctx, &cappedSource{src: p.gen, left: p.total}, sink,
		pipeline.RunOptions{StepTrace: true, OnProgress: func(done int64) { j.done.Store(done) }})
	if err != nil {
		return err
	}
	run := p.Record(out, s.opts.Version)
	run.MaxRequests = p.maxRequests
	result := shapeResult(sink.requests, sink.steps, out.Sim, p, &run)
	j.mu.Lock()
	j.requests, j.steps, j.run, j.result = sink.requests, sink.steps, &run, result
	j.mu.Unlock()
	j.done.Store(out.Sim.Completed + out.Sim.Rejected)
	return nil
}

func (s *Server) handleJob(r *http.Request) (any, error) {
	j, ok := s.jobs.get(r.PathValue("id"))
	if !ok {
		return nil, errorf(http.StatusNotFound, "job: unknown id %q (finished jobs are kept until %d newer ones exist)", r.PathValue("id"), s.opts.KeepJobs)
	}
	j.touch(s.opts.JobIdleTimeout)
	return j.view(), nil
}

// handleCancelJob stops a queued or running job, which frees its slot,
// and answers its state once it has stopped (a finished job is left as
// it is).
func (s *Server) handleCancelJob(r *http.Request) (any, error) {
	j, ok := s.jobs.get(r.PathValue("id"))
	if !ok {
		return nil, errorf(http.StatusNotFound, "job: unknown id %q", r.PathValue("id"))
	}
	j.stop(errorf(http.StatusGone, "simulate: cancelled by the client"))
	select {
	case <-j.ended:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return j.view(), nil
}

// handleDownload serves a finished job's files in `sim run --out`'s
// formats: requests.<fmt>, steps.<fmt>, run.json, or run-<fmt>.zip with
// all three.
func (s *Server) handleDownload(w http.ResponseWriter, r *http.Request) {
	j, ok := s.jobs.get(r.PathValue("id"))
	if !ok {
		writeError(w, errorf(http.StatusNotFound, "job: unknown id %q", r.PathValue("id")))
		return
	}
	j.mu.Lock()
	state, reqs, steps, run := j.state, j.requests, j.steps, j.run
	j.mu.Unlock()
	if state != jobDone {
		writeError(w, errorf(http.StatusConflict, "job: %s, not done", state))
		return
	}
	file := r.PathValue("file")
	var buf bytes.Buffer
	var err error
	ctype := "application/octet-stream"
	switch {
	case file == "run.json":
		ctype = "application/json"
		err = writeRunJSON(&buf, run)
	case strings.HasPrefix(file, "run-") && strings.HasSuffix(file, ".zip"):
		var f traces.Format
		if f, err = traces.ParseFormat(strings.TrimSuffix(strings.TrimPrefix(file, "run-"), ".zip")); err == nil {
			ctype = "application/zip"
			err = writeZip(&buf, f, reqs, steps, run)
		}
	default:
		base, ext, _ := strings.Cut(file, ".")
		var f traces.Format
		if f, err = traces.ParseFormat(ext); err != nil || (base != "requests" && base != "steps") {
			writeError(w, errorf(http.StatusNotFound, "file: unknown %q (want requests.<fmt>, steps.<fmt>, run.json or run-<fmt>.zip; fmt csv, jsonl or parquet)", file))
			return
		}
		if base == "requests" {
			err = writeRequests(&buf, f, reqs)
		} else {
			err = writeSteps(&buf, f, steps)
		}
	}
	if err != nil {
		writeError(w, errorf(http.StatusNotFound, "file: %v", err))
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", path.Base(file)))
	w.Write(buf.Bytes())
}

func writeRunJSON(w *bytes.Buffer, run *pipeline.Record) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(run)
}

func writeRequests(w *bytes.Buffer, f traces.Format, recs []traces.RequestRecord) error {
	tw, err := traces.NewRequestWriter(w, f)
	if err != nil {
		return err
	}
	return writeAll(tw, recs)
}

func writeSteps(w *bytes.Buffer, f traces.Format, recs []traces.StepRecord) error {
	tw, err := traces.NewStepWriter(w, f)
	if err != nil {
		return err
	}
	return writeAll(tw, recs)
}

// writeAll writes every record to tw (a traces.RequestWriter or
// StepWriter) and closes it.
func writeAll[R any](tw interface {
	Write(*R) error
	Close() error
}, recs []R) error {
	for i := range recs {
		if err := tw.Write(&recs[i]); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeZip(w *bytes.Buffer, f traces.Format, reqs []traces.RequestRecord, steps []traces.StepRecord, run *pipeline.Record) error {
	zw := zip.NewWriter(w)
	parts := []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"requests." + string(f), func(b *bytes.Buffer) error { return writeRequests(b, f, reqs) }},
		{"steps." + string(f), func(b *bytes.Buffer) error { return writeSteps(b, f, steps) }},
		{"run.json", func(b *bytes.Buffer) error { return writeRunJSON(b, run) }},
	}
	for _, p := range parts {
		var b bytes.Buffer
		if err := p.write(&b); err != nil {
			return err
		}
		fw, err := zw.Create(p.name)
		if err != nil {
			return err
		}
		if _, err := fw.Write(b.Bytes()); err != nil {
			return err
		}
	}
	return zw.Close()
}
