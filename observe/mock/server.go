package mock

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is the mock's http.Handler: /v1/completions, /v1/chat/completions
// (both streaming and not), /v1/models and a Prometheus /metrics page with
// vLLM's metric names. Close stops its engine.
type Server struct {
	cfg Config
	eng *engine
	mux *http.ServeMux

	mu       sync.Mutex
	received int // requests accepted by the handlers, for fault injection
	failed   int
}

// New starts a mock server's engine loop; call Close when done.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mock server: %w", err)
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, eng: newEngine(cfg), mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, false) })
	s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, true) })
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("POST /tokenize", s.tokenize)
	s.mux.HandleFunc("GET /metrics", s.metrics)
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close stops the engine; requests in flight end without their last tokens.
func (s *Server) Close() { s.eng.stop() }

// Stats is what the server did so far.
type Stats struct {
	// Received counts requests that reached the generation handlers;
	// Injected the failures injected among them.
	Received, Injected int
	// Steps counts engine steps, Finished requests that got all their
	// tokens, and LateSteps the steps whose tokens went out more than
	// LateAfter behind schedule.
	Steps, Finished, LateSteps int64
	// LagSum is the summed delay between each step's scheduled end and
	// when its tokens went out, over LaggedSteps steps.
	LagSum      time.Duration
	LaggedSteps int64
}

// Stats reports what the server did.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := Stats{Received: s.received, Injected: s.failed}
	s.mu.Unlock()
	_, _, st.Steps, st.Finished, st.LateSteps = s.eng.counts()
	st.LagSum, st.LaggedSteps = s.eng.lag()
	return st
}

// request is the subset of the OpenAI request body the mock reads.
type request struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	Messages      []message       `json:"messages"`
	MaxTokens     *int            `json:"max_tokens"`
	MaxCompletion *int            `json:"max_completion_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// apiError writes an OpenAI-style error body.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": http.StatusText(status), "code": status},
	})
}

// promptWords counts the prompt's tokens: whitespace-separated words.
func (rq *request) promptWords(chat bool) (int, error) {
	if chat {
		n := 0
		for _, m := range rq.Messages {
			n += len(strings.Fields(m.Content))
		}
		return n, nil
	}
	var text string
	if err := json.Unmarshal(rq.Prompt, &text); err != nil {
		return 0, fmt.Errorf("prompt: want a string")
	}
	return len(strings.Fields(text)), nil
}

// tokenize answers vLLM's /tokenize with the prompt's token count.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var rq request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&rq); err != nil {
		apiError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	n, err := rq.promptWords(false)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"count": n * s.cfg.TokensPerWord, "max_model_len": s.cfg.MaxModelLen})
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, chat bool) {
	arrived := time.Now()
	var rq request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&rq); err != nil {
		apiError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	s.mu.Lock()
	s.received++
	n := s.received
	inject := s.cfg.FailEvery > 0 && n%s.cfg.FailEvery == 0
	if inject {
		s.failed++
	}
	s.mu.Unlock()
	if inject {
		apiError(w, s.cfg.FailStatus, "injected failure")
		return
	}
	if s.cfg.Model != "" && rq.Model != s.cfg.Model {
		apiError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", rq.Model))
		return
	}
	prompt, err := rq.promptWords(chat)
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	prompt *= s.cfg.TokensPerWord
	maxTokens := 16
	if rq.MaxCompletion != nil {
		maxTokens = *rq.MaxCompletion
	} else if rq.MaxTokens != nil {
		maxTokens = *rq.MaxTokens
	}
	switch {
	case prompt < 1:
		apiError(w, http.StatusBadRequest, "prompt: must not be empty")
		return
	case maxTokens < 1:
		apiError(w, http.StatusBadRequest, "max_tokens: must be >= 1")
		return
	case prompt+maxTokens > s.cfg.MaxModelLen:
		apiError(w, http.StatusBadRequest, fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion).",
			s.cfg.MaxModelLen, prompt+maxTokens, prompt, maxTokens))
		return
	}
	j := &job{prompt: prompt, maxTokens: maxTokens, arrived: arrived, tokens: make(chan int, maxTokens)}
	if !s.eng.submit(j) {
		apiError(w, http.StatusServiceUnavailable, "server shutting down")
		return
	}
	drop := s.cfg.DropEvery > 0 && n%s.cfg.DropEvery == 0
	id := fmt.Sprintf("cmpl-mock-%d", n)
	if rq.Stream {
		s.stream(w, r, j, id, chat, rq.StreamOptions != nil && rq.StreamOptions.IncludeUsage, drop)
		return
	}
	s.whole(w, r, j, id, chat)
}

// wait collects the job's tokens; false when the client left or the
// engine stopped first.
func (s *Server) wait(r *http.Request, j *job, each func(i int) bool) bool {
	for {
		select {
		case i, ok := <-j.tokens:
			if !ok {
				return j.produced >= j.maxTokens && !j.cancelled
			}
			if !each(i) {
				s.eng.cancel(j)
				return false
			}
		case <-r.Context().Done():
			s.eng.cancel(j)
			return false
		}
	}
}

func (s *Server) usage(j *job) map[string]int {
	return map[string]int{"prompt_tokens": j.prompt, "completion_tokens": j.maxTokens, "total_tokens": j.prompt + j.maxTokens}
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, j *job, id string, chat, withUsage, drop bool) {
	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	object := "text_completion"
	if chat {
		object = "chat.completion.chunk"
	}
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if chat && !send(map[string]any{"id": id, "object": object, "created": created, "model": s.cfg.Model,
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "finish_reason": nil}}}) {
		s.eng.cancel(j)
		return
	}
	ok := s.wait(r, j, func(i int) bool {
		if drop && i == 1 {
			return false // stop mid-stream: the handler returns without [DONE]
		}
		var finish any
		if i == j.maxTokens-1 {
			finish = "length"
		}
		choice := map[string]any{"index": 0, "finish_reason": finish}
		if chat {
			choice["delta"] = map[string]any{"content": " tok"}
		} else {
			choice["text"] = " tok"
			choice["logprobs"] = nil
		}
		return send(map[string]any{"id": id, "object": object, "created": created, "model": s.cfg.Model, "choices": []any{choice}})
	})
	if !ok {
		return
	}
	if withUsage {
		send(map[string]any{"id": id, "object": object, "created": created, "model": s.cfg.Model, "choices": []any{}, "usage": s.usage(j)})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func (s *Server) whole(w http.ResponseWriter, r *http.Request, j *job, id string, chat bool) {
	if !s.wait(r, j, func(int) bool { return true }) {
		apiError(w, http.StatusServiceUnavailable, "request aborted")
		return
	}
	text := strings.Repeat(" tok", j.maxTokens)
	choice := map[string]any{"index": 0, "finish_reason": "length"}
	object := "text_completion"
	if chat {
		choice["message"] = map[string]any{"role": "assistant", "content": text}
		object = "chat.completion"
	} else {
		choice["text"] = text
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": id, "object": object, "created": time.Now().Unix(),
		"model": s.cfg.Model, "choices": []any{choice}, "usage": s.usage(j)})
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{
		map[string]any{"id": s.cfg.Model, "object": "model", "owned_by": "roofsim-mock", "max_model_len": s.cfg.MaxModelLen},
	}})
}

// metrics writes the gauges and counters that `sim observe --metrics`
// scrapes, under vLLM's names.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	running, waiting, _, finished, _ := s.eng.counts()
	usage := float64(running) / float64(s.cfg.MaxNumSeqs)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	lbl := fmt.Sprintf(`{model_name=%q}`, s.cfg.Model)
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(w, "vllm:num_requests_running%s %d\n", lbl, running)
	fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting%s %d\n", lbl, waiting)
	fmt.Fprintf(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc%s %g\n", lbl, usage)
	fmt.Fprintf(w, "# TYPE vllm:num_preemptions counter\nvllm:num_preemptions_total%s 0\n", lbl)
	fmt.Fprintf(w, "# TYPE vllm:request_success counter\nvllm:request_success_total{finished_reason=\"length\",%s} %d\n", lbl[1:len(lbl)-1], finished)
}
