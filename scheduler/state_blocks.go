package scheduler

import "fmt"

// SetStateBlocksPerRequest makes every running request hold n blocks for
// the fixed-size recurrent state of a hybrid model's linear-attention or
// Mamba layers, besides its KV blocks: one per state cache group of vLLM's
// hybrid allocator (sim.NewHybridCacheLayout). They are taken at
// admission (a request is admitted only when its KV blocks and these fit)
// and released with its KV blocks. n is derived from the model, not a
// setting, and must be set before any request is added; 0 (the default)
// is an attention-only model.
func (s *Scheduler) SetStateBlocksPerRequest(n int) error {
	if n < 0 {
		return fmt.Errorf("scheduler: state blocks per request must be >= 0, got %d", n)
	}
	if s.HasWork() {
		return fmt.Errorf("scheduler: state blocks per request set with requests queued")
	}
	s.stateBlocks = n
	return nil
}
