package scheduler

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		c := DefaultConfig()
		c.NumGPUBlocks = 100
		c.MaxModelLen = 4096
		return c
	}
	tests := []struct {
		name   string
		mutate func(c *Config)
		want   string // substring of the error; "" means valid
	}{
		{"defaults plus required", func(c *Config) {}, ""},
		{"empty policy means fcfs", func(c *Config) { c.Policy = "" }, ""},
		{"priority", func(c *Config) { c.Policy = PolicyPriority }, ""},
		{"sjf", func(c *Config) { c.Policy = PolicySJF }, ""},
		{"zero seqs", func(c *Config) { c.MaxNumSeqs = 0 }, "max_num_seqs: must be > 0"},
		{"zero budget", func(c *Config) { c.MaxNumBatchedTokens = 0 }, "max_num_batched_tokens: must be > 0"},
		{"budget below seqs", func(c *Config) { c.MaxNumBatchedTokens = 100 }, "max_num_batched_tokens: must be >= max_num_seqs"},
		{"zero block size", func(c *Config) { c.BlockSize = 0 }, "block_size: must be > 0"},
		{"no blocks", func(c *Config) { c.NumGPUBlocks = 0 }, "num_gpu_blocks: must be > 0"},
		{"no model len", func(c *Config) { c.MaxModelLen = 0 }, "max_model_len: must be > 0"},
		{"unknown policy", func(c *Config) { c.Policy = "lifo" }, `policy: unknown "lifo"`},
		{"negative threshold", func(c *Config) { c.LongPrefillTokenThreshold = -1 }, "long_prefill_token_threshold: must be >= 0"},
		{"threshold without chunking", func(c *Config) {
			c.EnableChunkedPrefill = false
			c.MaxNumBatchedTokens = 8192
			c.LongPrefillTokenThreshold = 10
		}, "long_prefill_token_threshold: requires enable_chunked_prefill"},
		{"no chunking, budget below model len", func(c *Config) { c.EnableChunkedPrefill = false; c.MaxModelLen = 10000 },
			"max_num_batched_tokens: must be >= max_model_len (10000) when chunked prefill is disabled"},
		{"no chunking, budget at model len", func(c *Config) { c.EnableChunkedPrefill = false; c.MaxModelLen = 8192 }, ""},
		{"chunking, long model", func(c *Config) { c.MaxModelLen = 131072 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := New(c); err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tc.want)
			}
			if _, err := New(c); err == nil {
				t.Fatalf("New accepted an invalid config")
			}
		})
	}
}

func TestDefaultConfigNeedsCapacity(t *testing.T) {
	c := DefaultConfig()
	err := c.Validate()
	for _, field := range []string{"num_gpu_blocks", "max_model_len"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("DefaultConfig().Validate() = %v, want it to name %s", err, field)
		}
	}
}

func TestAddRejects(t *testing.T) {
	c := testConfig() // block 4, 1000 blocks, max_model_len 1000
	c.NumGPUBlocks = 10
	c.MaxModelLen = 100
	tests := []struct {
		name   string
		r      Request
		reason string // "" means accepted
	}{
		{"fits exactly", Request{PromptTokens: 30, OutputTokens: 11}, ""}, // 40 tokens in KV = 10 blocks
		{"one block too many", Request{PromptTokens: 30, OutputTokens: 12}, ReasonExceedsKVCapacity},
		{"over max model len", Request{PromptTokens: 90, OutputTokens: 11}, ReasonPromptTooLong},
		{"prompt alone too long", Request{PromptTokens: 101, OutputTokens: 1}, ReasonPromptTooLong},
		{"zero prompt", Request{PromptTokens: 0, OutputTokens: 1}, ReasonInvalid},
		{"zero output", Request{PromptTokens: 5, OutputTokens: 0}, ReasonInvalid},
		{"empty segment", Request{PromptTokens: 5, OutputTokens: 1, Segments: []Segment{{Key: 1, Tokens: 0}}}, ReasonInvalid},
		{"segments beyond prompt", Request{PromptTokens: 5, OutputTokens: 1, Segments: []Segment{{1, 3}, {2, 3}}}, ReasonInvalid},
		{"segments cover prompt", Request{PromptTokens: 6, OutputTokens: 1, Segments: []Segment{{1, 3}, {2, 3}}}, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(c)
			if err != nil {
				t.Fatal(err)
			}
			r := tc.r
			r.ID = uint64(i)
			err = s.Add(&r)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Add: %v", err)
				}
				if s.Stats().Waiting != 1 {
					t.Fatalf("not queued")
				}
				return
			}
			var rej *RejectError
			if !errors.As(err, &rej) || rej.Reason != tc.reason || rej.ID != r.ID {
				t.Fatalf("Add = %v, want RejectError %s", err, tc.reason)
			}
			if s.HasWork() {
				t.Fatalf("rejected request was queued")
			}
		})
	}
}

func TestAddTwiceIsAnError(t *testing.T) {
	s, _ := New(testConfig())
	r := &Request{ID: 1, PromptTokens: 4, OutputTokens: 1}
	if err := s.Add(r); err != nil {
		t.Fatal(err)
	}
	err := s.Add(r)
	var rej *RejectError
	if err == nil || errors.As(err, &rej) {
		t.Fatalf("second Add = %v, want a plain error", err)
	}
}

// ValidateSettings accepts what a caller derives later (no KV capacity, no
// model length, a budget below the model length without chunking) and
// holds the block size to vLLM's powers of two; errors are *FieldError.
func TestValidateSettings(t *testing.T) {
	c := DefaultConfig()
	c.EnableChunkedPrefill, c.MaxModelLen = false, 100000
	if err := c.ValidateSettings(); err != nil {
		t.Errorf("ValidateSettings(defaults, no chunking) = %v", err)
	}
	if err := c.Validate(); err == nil {
		t.Error("Validate must still want num_gpu_blocks")
	}
	for _, bs := range []int{3, 24, 256} {
		c := DefaultConfig()
		c.BlockSize = bs
		var fe *FieldError
		if err := c.ValidateSettings(); !errors.As(err, &fe) || fe.Field != "block_size" {
			t.Errorf("block size %d: %v, want a block_size field error", bs, err)
		}
		c.NumGPUBlocks, c.MaxModelLen = 10, 10
		if err := c.Validate(); err != nil {
			t.Errorf("Validate keeps any positive block size, got %v for %d", err, bs)
		}
	}
}
