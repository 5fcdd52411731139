package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/workload"
)

// A deployment whose KV cache cannot hold one request of max_model_len
// tokens is refused, as vLLM refuses to start, with the length that would
// fit; that length is exactly the boundary: it passes, one block more fails.
func TestPrepareRefusesMaxModelLenBeyondKV(t *testing.T) {
	m, err := model.Lookup("llama-3.1-70b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	at := func(maxLen int) (*Prepared, error) {
		s := workload.DefaultDeployment()
		s.Model, s.GPU, s.TP, s.Weights = m.Name, g.Name, 2, "bf16"
		s.Serving.MaxModelLen = maxLen
		return Prepare(Deployment{Model: m, GPU: g, Settings: s})
	}
	_, err = at(0) // the model's 131,072-token context
	var fe *workload.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.max_model_len" {
		t.Fatalf("want a serving.max_model_len error, got %v", err)
	}
	short, err := at(4096)
	if err != nil {
		t.Fatal(err)
	}
	c := short.Capacity
	bs := short.Scheduler.BlockSize
	fit := c.Blocks * bs
	// Hand check of the figures the message gives: what one request of the
	// full context needs against what is left, per GPU.
	need := float64((m.MaxPositionEmbeddings+bs-1)/bs) * c.BytesPerBlock / GiB
	for _, want := range []string{
		fmt.Sprintf("one request of %d tokens", m.MaxPositionEmbeddings),
		fmt.Sprintf("%.2f GiB of KV cache is needed per GPU", need),
		fmt.Sprintf("the %.2f GiB left", c.KVBytes/GiB),
		fmt.Sprintf("estimated maximum model length is %d", fit),
	} {
		if !strings.Contains(fe.Reason, want) {
			t.Errorf("reason %q lacks %q", fe.Reason, want)
		}
	}
	if fit < 16_000 || fit > 30_000 {
		t.Errorf("70B bf16 on 2 H100 holds %d KV tokens; expected about 22k", fit)
	}
	if _, err := at(fit); err != nil {
		t.Errorf("max_model_len %d (what fits) refused: %v", fit, err)
	}
	if _, err := at(fit + 1); !errors.As(err, &fe) {
		t.Errorf("max_model_len %d (one token more than fits) accepted", fit+1)
	}
}
