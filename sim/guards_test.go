package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/workload"
)

// TestPrepareKVGuards: a derived KV cache past the simulator's per-instance bound (a
// 4 TiB GPU at block size 1 with an fp8 cache) and replicas whose caches together pass
// the total bound are refused with the setting named and the numbers, before any
// block is allocated.
func TestPrepareKVGuards(t *testing.T) {
	d := deployment(t, func(s *workload.Deployment) {
		s.Serving.BlockSize = 1
		s.KVCacheDType = "fp8"
	})
	big := d.GPU.Clone()
	big.MemoryGiB, big.UsableMemoryGiB = 4096, 0
	d.GPU = big
	_, err := Prepare(d)
	var fe *workload.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.block_size" || !strings.Contains(fe.Reason, "KV blocks of 1 tokens, above the simulator's 33554432") {
		t.Errorf("Prepare(4 TiB, block 1) = %v, want a serving.block_size error with the count", err)
	}
	d = deployment(t, func(s *workload.Deployment) { s.Replicas = 4096 })
	_, err = Prepare(d)
	if !errors.As(err, &fe) || fe.Key != "replicas" || !strings.Contains(fe.Reason, "4096 replicas x") {
		t.Errorf("Prepare(4096 replicas) = %v, want a replicas error", err)
	}
}
