// Package observe drives a real OpenAI-compatible server (vLLM, SGLang, TGI,
// llama.cpp server) with a roofsim workload and records what its users see,
// one traces.RequestRecord per request: the mirror image of package sim,
// with the same workload in and the same records out.
//
// Reading order: Config (what to drive and how hard), Run (the dispatcher
// that keeps arrivals on schedule), client.go (one streamed request),
// prompt.go (prompt text of a requested token count), metrics.go (the
// Prometheus scraper). The package never imports sim and never prints.
package observe

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// API selects the OpenAI endpoint requests go to.
type API string

// The supported APIs.
const (
	APICompletions     API = "completions"    // POST /v1/completions with a prompt
	APIChat            API = "chat"           // POST /v1/chat/completions with one user message
	defaultTimeout         = 10 * time.Minute // per request
	defaultConc            = 256              // in-flight requests
	defaultScrape          = 5 * time.Second  // metrics interval
	maxErrorBody           = 512              // bytes of an error body kept in the reason
	maxLineBytes           = 4 << 20          // longest SSE line accepted
	defaultWordsPerTok     = 1.0              // words per token without a tokenizer
	metricsTimeout         = 2 * time.Second  // one scrape
	progressEvery          = 100 * time.Millisecond
	maxWordsPerToken       = 16 // most prompt words per token (WordsPerToken)
)

// Config says which server to drive and how.
type Config struct {
	// URL is the server's base URL (http://host:port, with or without a
	// trailing /v1).
	URL string
	// Model is the model name sent in every request.
	Model string
	// API is completions (default) or chat.
	API API
	// MaxConcurrency bounds the requests in flight (default 256). A request
	// due while all slots are busy waits; the wait counts as lateness.
	MaxConcurrency int
	// RequestTimeout bounds one request from send to last token (default
	// 10 min); a request over it is recorded as "rejected:timeout".
	RequestTimeout time.Duration
	// MaxDuration stops sending new requests this long after the start and
	// cancels those still in flight (recorded as "rejected:cancelled");
	// 0 = until the workload is done.
	MaxDuration time.Duration
	// IgnoreEOS asks the server to generate exactly max_tokens tokens
	// (vLLM's ignore_eos; other servers ignore the field). Default true
	// through NewConfig.
	IgnoreEOS bool
	// WordsPerToken is the number of prompt words sent per requested
	// token (default 1: common English words are one token each in the
	// BPE vocabularies of current models). A tokenizer-derived value makes
	// prompt lengths exact; the recorded prompt_tokens always come from the
	// server's usage report when it sends one.
	WordsPerToken float64
	// Tokenize asks the server's /tokenize endpoint (vLLM and SGLang have
	// one) how many tokens a sample of prompt words makes before the run,
	// and sets WordsPerToken from the answer, so prompt lengths come out as
	// requested under the served model's own tokenizer.
	Tokenize bool
	// MetricsURL, when set, is scraped every MetricsInterval (default 5 s)
	// for vLLM's Prometheus gauges.
	MetricsURL      string
	MetricsInterval time.Duration
	// Headers are added to every request (e.g. Authorization).
	Headers map[string]string
	// OnProgress, when set, is called with the number of requests finished
	// (ok or not) and sent so far, at most every 100 ms and once at the end.
	OnProgress func(finished, sent int64)
}

// NewConfig returns a Config with the defaults filled in.
func NewConfig(baseURL, model string) Config {
	return Config{URL: baseURL, Model: model, API: APICompletions, MaxConcurrency: defaultConc,
		RequestTimeout: defaultTimeout, IgnoreEOS: true, WordsPerToken: defaultWordsPerTok, MetricsInterval: defaultScrape}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.API == "" {
		c.API = APICompletions
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = defaultConc
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = defaultTimeout
	}
	if c.WordsPerToken == 0 {
		c.WordsPerToken = defaultWordsPerTok
	}
	if c.MetricsInterval == 0 {
		c.MetricsInterval = defaultScrape
	}
	return c
}

// Validate reports the first bad field, by its flag-like name.
func (c Config) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return errors.New("url: required (e.g. http://localhost:8000)")
	case err != nil:
		return fmt.Errorf("url: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("url: scheme must be http or https, got %q", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("url: no host in %q", c.URL)
	case strings.TrimSpace(c.Model) == "":
		return errors.New("model: required (the served model name)")
	case c.API != "" && c.API != APICompletions && c.API != APIChat:
		return fmt.Errorf("api: unknown %q (want completions or chat)", c.API)
	case c.MaxConcurrency < 0:
		return errors.New("max-concurrency: must be >= 1")
	case c.RequestTimeout < 0:
		return errors.New("request-timeout: must not be negative")
	case c.MaxDuration < 0:
		return errors.New("max-duration: must not be negative")
	case c.WordsPerToken < 0 || c.WordsPerToken > maxWordsPerToken:
		return fmt.Errorf("words-per-token: must be in (0, %d], got %g", maxWordsPerToken, c.WordsPerToken)
	case c.MetricsInterval < 0:
		return errors.New("metrics-interval: must not be negative")
	}
	if c.MetricsURL != "" {
		if m, err := url.Parse(c.MetricsURL); err != nil || (m.Scheme != "http" && m.Scheme != "https") || m.Host == "" {
			return fmt.Errorf("metrics: want an http(s) URL, got %q", c.MetricsURL)
		}
	}
	return nil
}

// endpoint returns the URL of the API's path.
func (c Config) endpoint() string {
	base := strings.TrimRight(c.URL, "/")
	base = strings.TrimSuffix(base, "/v1")
	if c.API == APIChat {
		return base + "/v1/chat/completions"
	}
	return base + "/v1/completions"
}
