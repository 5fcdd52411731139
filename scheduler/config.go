package scheduler

import (
	"errors"
	"fmt"
)

// Waiting-queue policies accepted by Config.Policy.
const (
	// PolicyFCFS admits requests in the order they were added; a preempted request
	// goes back to the front of the queue.
	PolicyFCFS = "fcfs"
	// PolicyPriority admits the lowest Request.Priority value first, then the lowest
	// Request.Seq (earliest arrival), then the lowest ID.
	PolicyPriority = "priority"
	// PolicySJF admits the shortest prompt (Request.PromptTokens) first, then the
	// lowest Seq, then the lowest ID.
	PolicySJF = "sjf"
)

// Config sizes and configures one scheduler instance. Token counts are tokens, block
// counts are KV-cache blocks of BlockSize tokens each.
type Config struct {
	// MaxNumSeqs caps the number of running requests (vLLM max_num_seqs). Default 256.
	MaxNumSeqs int `yaml:"max_num_seqs" mapstructure:"max_num_seqs" json:"max_num_seqs"`
	// MaxNumBatchedTokens is the per-step token budget: the sum of new tokens computed
	// in one forward pass (vLLM max_num_batched_tokens). Default 8192. With chunked
	// prefill disabled it must be >= MaxModelLen, as in vLLM, because a prompt is then
	// never split and must fit one step. It must also be >= MaxNumSeqs.
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens" mapstructure:"max_num_batched_tokens" json:"max_num_batched_tokens"`
	// BlockSize is the number of tokens per KV-cache block. Default 16.
	BlockSize int `yaml:"block_size" mapstructure:"block_size" json:"block_size"`
	// NumGPUBlocks is the KV-cache capacity in blocks. Required (> 0); the caller
	// derives it from GPU memory or pins it to the number a real server reported.
	NumGPUBlocks int `yaml:"num_gpu_blocks" mapstructure:"num_gpu_blocks" json:"num_gpu_blocks"`
	// EnablePrefixCaching turns on automatic prefix caching of full blocks. Default true
	// (the vLLM v1 default).
	EnablePrefixCaching bool `yaml:"enable_prefix_caching" mapstructure:"enable_prefix_caching" json:"enable_prefix_caching"`
	// EnableChunkedPrefill lets a prompt be computed over several steps. Default true
	// (the vLLM v1 default).
	EnableChunkedPrefill bool `yaml:"enable_chunked_prefill" mapstructure:"enable_chunked_prefill" json:"enable_chunked_prefill"`
	// MaxModelLen is the largest PromptTokens+OutputTokens a request may have. Required
	// (> 0).
	MaxModelLen int `yaml:"max_model_len" mapstructure:"max_model_len" json:"max_model_len"`
	// Policy orders the waiting queue: "fcfs" (default; "" means fcfs), "priority" or
	// "sjf". See the Policy* constants.
	Policy string `yaml:"policy" mapstructure:"policy" json:"policy"`
	// LongPrefillTokenThreshold, when > 0, caps the tokens of one request's prefill
	// chunk per step (vLLM long_prefill_token_threshold). 0 means no cap. It requires
	// EnableChunkedPrefill.
	LongPrefillTokenThreshold int `yaml:"long_prefill_token_threshold" mapstructure:"long_prefill_token_threshold" json:"long_prefill_token_threshold"`
}

// DefaultConfig returns vLLM v1's defaults. NumGPUBlocks and MaxModelLen have no
// sensible default and are left 0: the caller must set them before Validate passes.
func DefaultConfig() Config {
	return Config{
		MaxNumSeqs:           256,
		MaxNumBatchedTokens:  8192,
		BlockSize:            16,
		EnablePrefixCaching:  true,
		EnableChunkedPrefill: true,
		Policy:               PolicyFCFS,
	}
}

// Validate reports every invalid field, each error naming the field and the reason.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.MaxNumSeqs <= 0 {
		bad("max_num_seqs: must be > 0 (got %d)", c.MaxNumSeqs)
	}
	if c.MaxNumBatchedTokens <= 0 {
		bad("max_num_batched_tokens: must be > 0 (got %d)", c.MaxNumBatchedTokens)
	} else if c.MaxNumSeqs > 0 && c.MaxNumBatchedTokens < c.MaxNumSeqs {
		bad("max_num_batched_tokens: must be >= max_num_seqs (%d), got %d", c.MaxNumSeqs, c.MaxNumBatchedTokens)
	}
	if c.BlockSize <= 0 {
		bad("block_size: must be > 0 (got %d)", c.BlockSize)
	}
	if c.NumGPUBlocks <= 0 {
		bad("num_gpu_blocks: must be > 0 (got %d)", c.NumGPUBlocks)
	} else if c.NumGPUBlocks >= 1<<31-1 {
		bad("num_gpu_blocks: must be < 2^31-1 (got %d)", c.NumGPUBlocks)
	}
	if c.MaxModelLen <= 0 {
		bad("max_model_len: must be > 0 (got %d)", c.MaxModelLen)
	}
	switch c.Policy {
	case "", PolicyFCFS, PolicyPriority, PolicySJF:
	default:
		bad("policy: unknown %q (want %s, %s or %s)", c.Policy, PolicyFCFS, PolicyPriority, PolicySJF)
	}
	if c.LongPrefillTokenThreshold < 0 {
		bad("long_prefill_token_threshold: must be >= 0 (got %d)", c.LongPrefillTokenThreshold)
	} else if c.LongPrefillTokenThreshold > 0 && !c.EnableChunkedPrefill {
		bad("long_prefill_token_threshold: requires enable_chunked_prefill")
	}
	if !c.EnableChunkedPrefill && c.MaxNumBatchedTokens > 0 && c.MaxModelLen > 0 && c.MaxNumBatchedTokens < c.MaxModelLen {
		bad("max_num_batched_tokens: must be >= max_model_len (%d) when chunked prefill is disabled, got %d", c.MaxModelLen, c.MaxNumBatchedTokens)
	}
	return errors.Join(errs...)
}
