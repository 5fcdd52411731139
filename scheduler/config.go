package scheduler

import (
	"errors"
	"fmt"
)

// Waiting-queue policies accepted by Config.Policy (policy.go).
const (
	// PolicyFCFS admits requests in the order they were added; a preempted request
	// goes back to the front of the queue.
	PolicyFCFS Policy = "fcfs"
	// PolicyPriority admits the lowest Request.Priority value first, then the lowest
	// Request.Seq (earliest arrival), then the lowest ID.
	PolicyPriority Policy = "priority"
	// PolicySJF admits the shortest prompt (Request.PromptTokens) first, then the
	// lowest Seq, then the lowest ID.
	PolicySJF Policy = "sjf"
)

// Config sizes and configures one scheduler instance. Token counts are tokens, block
// counts are KV-cache blocks of BlockSize tokens each.
type Config struct {
	// MaxNumSeqs caps the number of running requests (vLLM max_num_seqs). Default 256.
	MaxNumSeqs int `yaml:"max_num_seqs" mapstructure:"max_num_seqs" json:"max_num_seqs" help:"vLLM max_num_seqs: most requests running at once"`
	// MaxNumBatchedTokens is the per-step token budget: the sum of new tokens computed
	// in one forward pass (vLLM max_num_batched_tokens). Default 8192. With chunked
	// prefill disabled it must be >= MaxModelLen, as in vLLM, because a prompt is then
	// never split and must fit one step. It must also be >= MaxNumSeqs.
	MaxNumBatchedTokens int `yaml:"max_num_batched_tokens" mapstructure:"max_num_batched_tokens" json:"max_num_batched_tokens" help:"vLLM max_num_batched_tokens: token budget per step"`
	// BlockSize is the number of tokens per KV-cache block. Default 16.
	BlockSize int `yaml:"block_size" mapstructure:"block_size" json:"block_size" help:"KV block size in tokens: 1, 2, 4, ..., 128"`
	// NumGPUBlocks is the KV-cache capacity in blocks. Required (> 0); the caller
	// derives it from GPU memory or pins it to the number a real server reported.
	NumGPUBlocks int `yaml:"num_gpu_blocks" mapstructure:"num_gpu_blocks" json:"num_gpu_blocks" help:"pin the KV capacity to this many blocks (0 = derive from memory)"`
	// EnablePrefixCaching turns on automatic prefix caching of full blocks. Default true
	// (the vLLM v1 default).
	EnablePrefixCaching bool `yaml:"enable_prefix_caching" mapstructure:"enable_prefix_caching" json:"enable_prefix_caching" help:"vLLM automatic prefix caching"`
	// EnableChunkedPrefill lets a prompt be computed over several steps. Default true
	// (the vLLM v1 default).
	EnableChunkedPrefill bool `yaml:"enable_chunked_prefill" mapstructure:"enable_chunked_prefill" json:"enable_chunked_prefill" help:"vLLM chunked prefill"`
	// MaxModelLen is the largest PromptTokens+OutputTokens a request may have. Required
	// (> 0).
	MaxModelLen int `yaml:"max_model_len" mapstructure:"max_model_len" json:"max_model_len" help:"longest prompt+output in tokens (0 = the model's context)"`
	// Policy (key scheduling_policy, as in vLLM) orders the waiting queue: "fcfs"
	// (default; "" means fcfs), "priority" or
	// "sjf". See the Policy* constants.
	Policy Policy `yaml:"scheduling_policy" mapstructure:"scheduling_policy" json:"scheduling_policy" help:"waiting-queue order: fcfs, priority or sjf"`
	// LongPrefillTokenThreshold, when > 0, caps the tokens of one request's prefill
	// chunk per step (vLLM long_prefill_token_threshold). 0 means no cap. It requires
	// EnableChunkedPrefill.
	LongPrefillTokenThreshold int `yaml:"long_prefill_token_threshold" mapstructure:"long_prefill_token_threshold" json:"long_prefill_token_threshold" help:"vLLM long_prefill_token_threshold: most prompt tokens of one request per step (0 = no cap)"`
	// Speculative configures speculative decoding (speculative.go); the
	// zero value is off. It is not a setting of its own: the engine sets it
	// from serving.speculative.
	Speculative Speculation `yaml:"-" mapstructure:"-" json:"-"`
	// NumCPUBlocks is the capacity, in blocks, of the CPU tier that prefix-cached
	// blocks evicted from the GPU go to (vLLM's OffloadingConnector; offload.go).
	// 0 = no CPU tier. Derived by the caller from serving.kv_offload, not a setting.
	NumCPUBlocks int `yaml:"-" mapstructure:"-" json:"num_cpu_blocks,omitempty"`
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

// FieldError is one invalid setting: Field is its key (as in the yaml,
// mapstructure and json tags), Reason says what is wrong. Error() reads
// "field: reason".
type FieldError struct {
	Field, Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Validate reports every invalid field of a configuration ready to run, each
// error a *FieldError naming the field and the reason.
func (c *Config) Validate() error { return c.check(false) }

// ValidateSettings checks c as a user gives it, before the caller derives
// the KV capacity and the model length: NumGPUBlocks and MaxModelLen may be
// 0 (derived), the block size must be a power of two up to 128 (as vLLM's
// are), and the chunked-prefill bound on MaxNumBatchedTokens is left to the
// caller, which raises the budget to MaxModelLen as vLLM does.
func (c *Config) ValidateSettings() error { return c.check(true) }

// check implements Validate (settings false) and ValidateSettings.
func (c *Config) check(settings bool) error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if c.MaxNumSeqs <= 0 {
		bad("max_num_seqs", "must be > 0 (got %d)", c.MaxNumSeqs)
	}
	if c.MaxNumBatchedTokens <= 0 {
		bad("max_num_batched_tokens", "must be > 0 (got %d)", c.MaxNumBatchedTokens)
	} else if c.MaxNumSeqs > 0 && c.MaxNumBatchedTokens < c.MaxNumSeqs {
		bad("max_num_batched_tokens", "must be >= max_num_seqs (%d), got %d", c.MaxNumSeqs, c.MaxNumBatchedTokens)
	}
	switch {
	case c.BlockSize <= 0:
		bad("block_size", "must be > 0 (got %d)", c.BlockSize)
	case settings && (c.BlockSize > 128 || c.BlockSize&(c.BlockSize-1) != 0):
		bad("block_size", "must be one of 1, 2, 4, 8, 16, 32, 64, 128 (got %d)", c.BlockSize)
	}
	switch {
	case c.NumGPUBlocks < 0 || c.NumGPUBlocks == 0 && !settings:
		bad("num_gpu_blocks", "must be > 0 (got %d)", c.NumGPUBlocks)
	case c.NumGPUBlocks >= 1<<31-1:
		bad("num_gpu_blocks", "must be < 2^31-1 (got %d)", c.NumGPUBlocks)
	}
	if c.MaxModelLen < 0 || c.MaxModelLen == 0 && !settings {
		bad("max_model_len", "must be > 0 (got %d)", c.MaxModelLen)
	}
	if err := c.Policy.Validate(); err != nil {
		bad("scheduling_policy", "%v", err)
	}
	if c.LongPrefillTokenThreshold < 0 {
		bad("long_prefill_token_threshold", "must be >= 0 (got %d)", c.LongPrefillTokenThreshold)
	} else if c.LongPrefillTokenThreshold > 0 && !c.EnableChunkedPrefill {
		bad("long_prefill_token_threshold", "requires enable_chunked_prefill")
	}
	c.Speculative.check(bad)
	if c.NumCPUBlocks < 0 {
		bad("num_cpu_blocks", "must be >= 0 (got %d)", c.NumCPUBlocks)
	}
	if !settings && !c.EnableChunkedPrefill && c.MaxNumBatchedTokens > 0 && c.MaxModelLen > 0 && c.MaxNumBatchedTokens < c.MaxModelLen {
		bad("max_num_batched_tokens", "must be >= max_model_len (%d) when chunked prefill is disabled, got %d", c.MaxModelLen, c.MaxNumBatchedTokens)
	}
	return errors.Join(errs...)
}
