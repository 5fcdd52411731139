// Package mock is an OpenAI-compatible completions server whose latencies come
// from a known step model, for testing `sim observe` and the calibration that
// follows it without a GPU.
//
// The server runs a vLLM-like engine loop on the wall clock: continuous
// batching with at most MaxNumSeqs running requests and a per-step token
// budget (chunked prefill), running requests served before waiting ones,
// waiting ones admitted first come first served. One step costs
//
//	BatchCost + PerRequestCost*requests + tokens/TokensPerS
//
// where requests is the number of requests in the batch and tokens counts
// the prefill tokens plus one per decoding request. A request's first token
// is produced by the step that finishes its prefill; every later step
// produces one more. A prompt's length in tokens is its number of
// whitespace-separated words, and every output token is one word, so the
// token counts that `usage` reports are exact.
//
// Reading order: Config (the cost model and fault injection), Server
// (HTTP handlers), engine.go (the step loop).
package mock

import (
	"errors"
	"fmt"
	"time"
)

// Config is the mock server's cost model, limits and injected faults.
type Config struct {
	// Model is the served model name (/v1/models, and checked against
	// requests when set; an unknown model gets HTTP 404 as vLLM answers).
	Model string
	// BatchCost is the fixed cost of one engine step.
	BatchCost time.Duration
	// PerRequestCost is added per request in the step's batch.
	PerRequestCost time.Duration
	// TokensPerS is the rate at which the step processes tokens (prefill
	// tokens and one token per decoding request), tokens/s; > 0.
	TokensPerS float64
	// MaxNumSeqs bounds the running requests (default 256).
	MaxNumSeqs int
	// MaxNumBatchedTokens is the per-step token budget (default 8192).
	MaxNumBatchedTokens int
	// MaxModelLen rejects prompt + max_tokens above it with HTTP 400
	// (default 32768).
	MaxModelLen int
	// FailEvery makes every FailEvery-th request (1-based, in order of
	// arrival) fail at once with FailStatus; 0 = never.
	FailEvery int
	// FailStatus is the status of injected failures (default 503).
	FailStatus int
	// TokensPerWord makes /tokenize (and usage.prompt_tokens) count this
	// many tokens per prompt word (default 1), like a tokenizer that
	// splits words.
	TokensPerWord int
	// DropEvery cuts every DropEvery-th request's stream after its first
	// token, without the final chunk (a server that dies mid-stream);
	// 0 = never.
	DropEvery int
}

// withDefaults returns c with zero limits replaced by their defaults.
func (c Config) withDefaults() Config {
	if c.MaxNumSeqs == 0 {
		c.MaxNumSeqs = 256
	}
	if c.MaxNumBatchedTokens == 0 {
		c.MaxNumBatchedTokens = 8192
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = 32768
	}
	if c.FailStatus == 0 {
		c.FailStatus = 503
	}
	if c.TokensPerWord == 0 {
		c.TokensPerWord = 1
	}
	return c
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.BatchCost < 0:
		return errors.New("batch_cost: must not be negative")
	case c.PerRequestCost < 0:
		return errors.New("per_request_cost: must not be negative")
	case !(c.TokensPerS > 0):
		return fmt.Errorf("tokens_per_s: must be > 0, got %g", c.TokensPerS)
	case c.MaxNumSeqs < 0, c.MaxNumBatchedTokens < 0, c.MaxModelLen < 0:
		return errors.New("limits: must not be negative")
	case c.FailEvery < 0, c.DropEvery < 0, c.TokensPerWord < 0:
		return errors.New("fail_every, drop_every: must not be negative")
	case c.FailStatus != 0 && (c.FailStatus < 400 || c.FailStatus > 599):
		return fmt.Errorf("fail_status: must be an HTTP error status, got %d", c.FailStatus)
	}
	return nil
}

// StepTime is the cost of one step of requests requests processing tokens
// tokens (prefill tokens plus one per decode).
func (c Config) StepTime(requests, tokens int) time.Duration {
	return c.BatchCost + time.Duration(requests)*c.PerRequestCost +
		time.Duration(float64(tokens)/c.TokensPerS*1e9)
}
