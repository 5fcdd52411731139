package sim_test

import (
	"math"
	"testing"
)

// findSanityDeployment finds one (model, GPU, TP) of the catalog walk.
func findSanityDeployment(t *testing.T, deps []sanityDeployment, model, gpu string, tp int) *sanityDeployment {
	t.Helper()
	for i := range deps {
		if d := &deps[i]; d.cfg.Name == model && d.name == gpu && d.tp == tp {
			return d
		}
	}
	t.Fatalf("%s on %s tp %d: not in the catalog walk", model, gpu, tp)
	return nil
}

// TestSanityFloorsHand checks the floors of the catalog walk against hand
// computations from their definitions.
func TestSanityFloorsHand(t *testing.T) {
	deps := sanityDeployments(t)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s = %.6g, want %.6g", what, got, want)
		}
	}

	// Llama-3.1-8B bf16 on one H100: 32 layers, 8 KV heads of 128, vocab
	// 128256 x hidden 4096 untied. Batch 4 at kv 512 reads the weights less
	// the embedding table, and 4 x 512 tokens x 32 layers x 2 x 8 x 128 x 2
	// bytes of KV.
	d := findSanityDeployment(t, deps, "llama-3.1-8b", "h100", 1)
	wantBytes := d.prep.Step.WeightBytesPerGPU() - 128256*4096*2 + 4*512*32*2*8*128*2
	near("llama-3.1-8b decodeBytes(4, 512)", decodeBytes(t, d, 4, 512), wantBytes)
	// FLOPs: 2 x 4 tokens x (attention 32 x (4096 x 6144 + 4096 x 4096) +
	// MLP 32 x 3 x 4096 x 14336) + 4 x 32 heads x 128 x 4 x 512 x 32 keys.
	attn, mlp := 32.0*(4096*6144+4096*4096), 32.0*3*4096*14336
	wantFLOPs := 2*4*(attn+mlp) + 4*32*128*4*512*32.0
	near("llama-3.1-8b stepFLOPs(4, ...)", stepFLOPs(d, 4, 4*keysAttended(d.cfg, 512)), wantFLOPs)
	near("llama-3.1-8b decodeFloor(4, 512)", decodeFloor(t, d, 4, 512),
		max(wantBytes/3350e9, wantFLOPs/d.peak))
	// Prefill of 1000 tokens: 2 x 1000 x params + 4 x 32 x 128 x 1000 x 1001 / 2 x 32.
	near("llama-3.1-8b prefillFloor(1000)", prefillFloor(d, 1000), (2*1000*(attn+mlp)+4*32*128*1000*1001/2*32.0)/d.peak)

	// Mixtral-8x7B on two H200s at batch 1: 2 of 8 experts touched, so
	// 6/8 of the routed experts (32 layers x 8 x 3 x 4096 x 14336 bf16,
	// split over 2 GPUs) are not read.
	m := findSanityDeployment(t, deps, "mixtral-8x7b", "h200", 2)
	routed := 32.0 * 8 * 3 * 4096 * 14336 * 2 / 2
	kv := 1.0 * 100 * 32 * 2 * 4 * 128 * 2 // 4 KV heads per GPU
	near("mixtral-8x7b decodeBytes(1, 100)", decodeBytes(t, m, 1, 100),
		m.prep.Step.WeightBytesPerGPU()-32000*4096*2/2-routed*6/8+kv)
}
