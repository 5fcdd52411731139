package sim

import (
	"fmt"
	"math"

	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
)

// kvOffload sizes the CPU tier of serving.kv_offload into sc and p. As
// vLLM's --kv-offloading-size, cpu_gib is the instance's total, split over
// its ranks (vllm/config/vllm.py, _post_init_kv_transfer_config: bytes per
// rank = size GiB / (tp x pp); each rank's CPUOffloadingSpec then holds
// bytes // its block shard, vllm/v1/kv_offload/cpu/spec.py). So an
// instance's cpu_gib holds blocks whose shards add up, over its tp GPUs, to
// tp x (block_size x KV bytes per token per GPU), so it takes
// floor(cpu_gib GiB / that) blocks; loading one back moves one shard over
// each GPU's host link at once, block_size x KV bytes per token per GPU /
// (bandwidth_gbps x 1e9) seconds.
func (p *Prepared) kvOffload(sc *scheduler.Config, st settings.Deployment, kvBytesPerTokenPerGPU float64) error {
	o := st.Serving.KVOffload
	if o.CPUGiB == 0 {
		return nil
	}
	shard := float64(sc.BlockSize) * kvBytesPerTokenPerGPU
	if !(shard > 0) {
		return &settings.FieldError{Key: "serving.kv_offload.cpu_gib", Reason: "the model has no KV cache to offload"}
	}
	blocks := math.Floor(o.CPUGiB * GiB / (shard * float64(max(st.TP, 1))))
	if blocks < 1 || blocks >= 1<<31-1 {
		return &settings.FieldError{Key: "serving.kv_offload.cpu_gib", Reason: fmt.Sprintf("%g GiB holds %.0f KV blocks of %.0f bytes per GPU x tp %d; want 1 to 2^31-2", o.CPUGiB, blocks, shard, st.TP)}
	}
	sc.NumCPUBlocks = int(blocks)
	p.ReloadBlockSeconds = shard / (o.LinkGBps() * 1e9)
	return nil
}
