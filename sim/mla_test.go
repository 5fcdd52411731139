package sim

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/settings"
)

// mlaModel is a DeepSeek-V2-Lite-shaped model: multi-head latent attention
// without a query latent (Lkv 512, R 64), 16 heads, 27 layers, MoE after
// the first dense layer.
func mlaModel() *model.Config {
	return &model.Config{
		Name: "mla-lite", HiddenSize: 2048, NumLayers: 27, NumHeads: 16, NumKVHeads: 16, HeadDim: 192,
		IntermediateSize: 10944, VocabSize: 102400, MaxPositionEmbeddings: 163840, GatedMLP: true, DType: "bf16",
		MLA: &model.MLA{KVLoRARank: 512, QKNopeHeadDim: 128, QKRopeHeadDim: 64, VHeadDim: 128},
		MoE: &model.MoE{NumExperts: 64, TopK: 6, ExpertIntermediateSize: 1408, NumSharedExperts: 2,
			SharedIntermediateSize: 1408, FirstDenseLayers: 1},
	}
}

func prepareMLA(t *testing.T, tp int) *Prepared {
	t.Helper()
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	st := settings.DefaultDeployment()
	st.TP = tp
	p, err := Prepare(Deployment{Model: mlaModel(), GPU: g, Settings: st})
	if err != nil {
		t.Fatalf("tp %d: %v", tp, err)
	}
	return p
}

// TestMLACapacityNotSplitByTP: every TP rank stores each token's whole
// latent, so a KV block costs block_size x layers x (Lkv + R) x 2 bytes on
// every rank whatever the TP; more TP frees weight memory only.
func TestMLACapacityNotSplitByTP(t *testing.T) {
	one, four := prepareMLA(t, 1), prepareMLA(t, 4)
	want := float64(one.Scheduler.BlockSize) * 27 * 576 * 2
	for _, p := range []*Prepared{one, four} {
		if p.Capacity.BytesPerBlock != want {
			t.Errorf("tp %d: bytes per block %.0f, want %.0f", p.Step.Options().TP, p.Capacity.BytesPerBlock, want)
		}
	}
	if !(four.Capacity.WeightBytes < one.Capacity.WeightBytes/3) || !(four.Capacity.Blocks > one.Capacity.Blocks) {
		t.Errorf("tp 4: weights %.2f GiB, %d blocks; tp 1: %.2f GiB, %d blocks", four.Capacity.WeightBytes/GiB,
			four.Capacity.Blocks, one.Capacity.WeightBytes/GiB, one.Capacity.Blocks)
	}
}

// TestMLARunConservesAndRepeats: a run of the MLA model conserves requests
// and tokens, with and without preemption, and the same seed gives the
// same bytes.
func TestMLARunConservesAndRepeats(t *testing.T) {
	checkRunConservesAndRepeats(t, prepareMLA(t, 2).Step)
}

// checkRunConservesAndRepeats runs chatYAML on step with a roomy and a
// tight (400-block) cache: requests and output tokens are conserved, the
// tight cache preempts, and the same seed gives the same bytes.
func checkRunConservesAndRepeats(t *testing.T, step StepModel) {
	t.Helper()
	for _, blocks := range []int{8000, 400} {
		cfg := Config{Scheduler: schedCfg(blocks), StepModel: step, Replicas: 1, CheckInvariants: true}
		res, sink := runOnce(t, chatYAML, cfg)
		if res.Arrived != 660 || res.Completed+res.Rejected != 660 || res.InFlight != 0 {
			t.Fatalf("blocks %d: arrived %d, completed %d, rejected %d, in flight %d", blocks, res.Arrived, res.Completed, res.Rejected, res.InFlight)
		}
		if res.OutputTokensGenerated != res.OutputTokensCompleted {
			t.Fatalf("blocks %d: generated %d output tokens, completed requests hold %d", blocks, res.OutputTokensGenerated, res.OutputTokensCompleted)
		}
		var out int64
		for _, r := range sink.reqs {
			if r.Status == "ok" {
				out += int64(r.OutputTokens)
			}
		}
		if out != res.OutputTokensCompleted {
			t.Fatalf("blocks %d: output tokens in records %d, completed %d", blocks, out, res.OutputTokensCompleted)
		}
		if blocks == 400 && res.Preemptions == 0 {
			t.Errorf("a 400-block cache should preempt")
		}
		again, sink2 := runOnce(t, chatYAML, cfg)
		j1, _ := json.Marshal(res.Summary)
		j2, _ := json.Marshal(again.Summary)
		if !bytes.Equal(j1, j2) || !bytes.Equal(sink.buf.Bytes(), sink2.buf.Bytes()) {
			t.Fatalf("blocks %d: the same seed gave different results", blocks)
		}
	}
}
