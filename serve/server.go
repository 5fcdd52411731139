// Package serve is roofsim's web view: an HTTP server with an embedded
// single-page UI (roofline with Kernel Spot Check, simulate, sweep and
// validation pages) and a JSON API over the same libraries the CLI uses.
//
// Reading order: server.go (options, routes, lifecycle), httpjson.go (JSON
// errors, body limits, panic recovery), gpu.go (GPU from the catalog or an
// uploaded YAML), roofline.go and spotcheck.go (the roofline page),
// agent.go (the measurement agent's protocol), simulate.go and jobs.go
// (bounded simulation jobs and their downloads), results.go (what the
// simulate page draws), sweep.go, validate.go and validate_run.go (reports
// loaded or made from data under --data), data.go (files under --data,
// never outside it).
//
// The package holds no model logic: every number comes from roofline,
// hardware, model, sim, workload, traces, sweep or calibrate.
package serve

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/roofsim/roofsim/internal/limits"
)

//go:embed assets
var assets embed.FS

// Options configure a Server. Zero values take the defaults in
// DefaultOptions.
type Options struct {
	// MeasureURL is the base URL of a measurement agent
	// (tools/gpu-agent); empty disables measured spot checks.
	MeasureURL string
	// DataDir is the only directory whose files the server may read
	// (sweep results, validation tables); empty disables file access.
	DataDir string
	// MaxUploadBytes caps every request body (uploads included).
	MaxUploadBytes int64
	// MaxRequests caps the requests one simulation may generate.
	MaxRequests int
	// SimTimeout bounds one simulation's wall time.
	SimTimeout time.Duration
	// MaxJobs is how many simulations run at once; KeepJobs how many
	// finished ones are kept for display and download.
	MaxJobs, KeepJobs int
	// AgentTimeout bounds one measurement request to the agent.
	AgentTimeout time.Duration
	// Version is roofsim's version, as run.json downloads record it.
	Version string
	// Addr is the address the server listens on (host:port, as --addr
	// gives it). Requests whose Host header names neither a loopback name
	// (localhost, 127.0.0.1, [::1]) nor this host and port are refused;
	// an unspecified host (0.0.0.0, [::]) also accepts the machine's host
	// name and interface addresses. Empty accepts loopback names on any
	// port (tests on httptest servers).
	Addr string
	// AllowHosts are further host names (or IP addresses) the Host header
	// may name, e.g. a DNS name the machine is reached by.
	AllowHosts []string
	// JobIdleTimeout cancels a queued or running simulation that no client
	// has asked about (GET /api/jobs/{id}) for this long, so a job whose
	// page was closed frees its slot. The page polls every 250 ms, and a
	// browser that throttles a background tab still polls once a minute.
	JobIdleTimeout time.Duration
}

// DefaultOptions returns the defaults: 8 MiB uploads, 20,000 requests and
// 60 s per simulation, 2 simulations at once, 8 kept, a job cancelled
// after 2 minutes without a poll, 60 s per agent measurement.
func DefaultOptions() Options {
	return Options{
		MaxUploadBytes: 8 << 20,
		MaxRequests:    20000,
		SimTimeout:     60 * time.Second,
		MaxJobs:        2,
		KeepJobs:       8,
		AgentTimeout:   60 * time.Second,
		JobIdleTimeout: 2 * time.Minute,
	}
}

// maxUploadBytes bounds Options.MaxUploadBytes: 1 GiB.
const maxUploadBytes = 1 << 30

// Validate checks the options after defaults were applied.
func (o *Options) Validate() error {
	if o.MeasureURL != "" {
		u, err := url.Parse(o.MeasureURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("measure-url: want http://host:port, got %q", o.MeasureURL)
		}
	}
	switch {
	case o.MaxUploadBytes < 1024 || o.MaxUploadBytes > maxUploadBytes:
		return fmt.Errorf("max upload: must be in [1024, %d] bytes, got %d", int64(maxUploadBytes), o.MaxUploadBytes)
	case o.MaxRequests < 1 || o.MaxRequests > limits.MaxRequests:
		return fmt.Errorf("max requests: %w", limits.IntIn(o.MaxRequests, 1, limits.MaxRequests))
	case o.SimTimeout <= 0:
		return fmt.Errorf("simulation timeout: must be > 0, got %s", o.SimTimeout)
	case o.MaxJobs < 1 || o.KeepJobs < o.MaxJobs:
		return fmt.Errorf("jobs: want 1 <= running (%d) <= kept (%d)", o.MaxJobs, o.KeepJobs)
	case o.AgentTimeout <= 0:
		return fmt.Errorf("agent timeout: must be > 0, got %s", o.AgentTimeout)
	case o.JobIdleTimeout <= 0:
		return fmt.Errorf("job idle timeout: must be > 0, got %s", o.JobIdleTimeout)
	}
	return nil
}

func (o *Options) defaults() {
	d := DefaultOptions()
	if o.MaxUploadBytes == 0 {
		o.MaxUploadBytes = d.MaxUploadBytes
	}
	if o.MaxRequests == 0 {
		o.MaxRequests = d.MaxRequests
	}
	if o.SimTimeout == 0 {
		o.SimTimeout = d.SimTimeout
	}
	if o.MaxJobs == 0 {
		o.MaxJobs = d.MaxJobs
	}
	if o.KeepJobs == 0 {
		o.KeepJobs = max(d.KeepJobs, o.MaxJobs)
	}
	if o.AgentTimeout == 0 {
		o.AgentTimeout = d.AgentTimeout
	}
	if o.JobIdleTimeout == 0 {
		o.JobIdleTimeout = d.JobIdleTimeout
	}
}

// Server is the web view. It is safe for concurrent use.
type Server struct {
	opts  Options
	data  *dataDir // nil without --data
	agent *AgentClient
	jobs  *jobs
	// maxSteps caps a job's step trace (maxStepsPerJob; tests lower it).
	maxSteps int
	// validating holds a token while a validation runs (one at a time).
	validating chan struct{}
	mux        *http.ServeMux
	// hosts are the Host headers that name this server.
	hosts *hostPolicy
	// ctx is cancelled by Close: running simulations stop.
	ctx    context.Context
	cancel context.CancelFunc
}

// New checks opts and builds a server.
func New(opts Options) (*Server, error) {
	opts.defaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts}
	hosts, err := newHostPolicy(opts.Addr, opts.AllowHosts)
	if err != nil {
		return nil, err
	}
	s.hosts = hosts
	if opts.DataDir != "" {
		d, err := openDataDir(opts.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data: %w", err)
		}
		s.data = d
	}
	if opts.MeasureURL != "" {
		s.agent = &AgentClient{BaseURL: opts.MeasureURL, HTTP: &http.Client{Timeout: opts.AgentTimeout}}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.jobs = newJobs(opts.MaxJobs, opts.KeepJobs, opts.JobIdleTimeout)
	s.validating = make(chan struct{}, 1)
	s.maxSteps = maxStepsPerJob
	s.routes()
	return s, nil
}

// Handler returns the server's HTTP handler: the routes behind the host
// check and cross-origin protection (protect.go).
func (s *Server) Handler() http.Handler { return s.protect(s.mux) }

// Close stops running simulations.
func (s *Server) Close() { s.cancel() }

func (s *Server) routes() {
	m := http.NewServeMux()
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(static)
	m.Handle("/", securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, errorf(http.StatusMethodNotAllowed, "%s %s: only GET", r.Method, r.URL.Path))
			return
		}
		files.ServeHTTP(w, r)
	})))
	api := map[string]func(*http.Request) (any, error){
		"GET /api/info":             s.handleInfo,
		"GET /api/gpus":             s.handleGPUs,
		"GET /api/models":           s.handleModels,
		"GET /api/examples":         s.handleExamples,
		"GET /api/settings":         s.handleSettings,
		"POST /api/roofline":        s.handleRoofline,
		"POST /api/spotcheck":       s.handleSpotCheck,
		"GET /api/measured-example": s.handleMeasuredExample,
		"POST /api/simulate":        s.handleSimulate,
		"GET /api/jobs/{id}":        s.handleJob,
		"DELETE /api/jobs/{id}":     s.handleCancelJob,
		"GET /api/data":             s.handleDataList,
		"POST /api/sweep":           s.handleSweep,
		"POST /api/validate":        s.handleValidate,
		"POST /api/validate/run":    s.handleValidateRun,
	}
	for pattern, h := range api {
		m.Handle(pattern, s.apiHandler(h))
	}
	m.Handle("GET /api/jobs/{id}/download/{file}", s.guard(http.HandlerFunc(s.handleDownload)))
	m.Handle("/api/", s.apiHandler(func(r *http.Request) (any, error) {
		return nil, errorf(http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	}))
	s.mux = m
}

// Serve answers HTTP on ln until ctx is cancelled, then shuts down
// gracefully (in-flight requests get up to 5 s) and stops the running
// simulations.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// IsLoopback reports whether addr (host:port) names a loopback host.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type infoResponse struct {
	MeasureURL  string `json:"measure_url,omitempty"`
	DataDir     string `json:"data_dir,omitempty"`
	MaxRequests int    `json:"max_requests"`
	SimTimeoutS int    `json:"sim_timeout_s"`
	MaxUpload   int64  `json:"max_upload_bytes"`
}

func (s *Server) handleInfo(*http.Request) (any, error) {
	r := infoResponse{MeasureURL: s.opts.MeasureURL, MaxRequests: s.opts.MaxRequests,
		SimTimeoutS: int(s.opts.SimTimeout / time.Second), MaxUpload: s.opts.MaxUploadBytes}
	if s.data != nil {
		r.DataDir = filepath.Base(s.data.root)
	}
	return r, nil
}
