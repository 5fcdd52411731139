package sim

import (
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/settings"
)

// dsaModel is a small model with DeepSeek sparse attention: MLA with a
// query latent (Lq 512, Lkv 512, R 64), 16 heads, 12 layers, an indexer of
// 8 heads of 128 keeping the top 256 keys, and MoE after the first layer.
func dsaModel() *model.Config {
	c := mlaModel()
	c.Name, c.NumLayers = "dsa-small", 12
	c.MLA.QLoRARank = 512
	c.MLA.Indexer = &model.SparseIndexer{Heads: 8, HeadDim: 128, TopK: 256}
	return c
}

// TestDSACapacityAndRun: a KV block holds, on every TP rank, each layer's
// latent (576 x 2 bytes) and indexer key (128 + 4 bytes); a run of the
// sparse model conserves requests and tokens, with and without
// preemption, and repeats byte for byte.
func TestDSACapacityAndRun(t *testing.T) {
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	st := settings.DefaultDeployment()
	st.TP = 2
	p, err := Prepare(Deployment{Model: dsaModel(), GPU: g, Settings: st})
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(p.Scheduler.BlockSize) * 12 * (576*2 + 132); p.Capacity.BytesPerBlock != want {
		t.Errorf("bytes per block %.0f, want %.0f", p.Capacity.BytesPerBlock, want)
	}
	checkRunConservesAndRepeats(t, p.Step)
}
