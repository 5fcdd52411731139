package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/settings"
)

// TestQwen35MTPSpeculation: a Qwen3.5 config with mtp_num_hidden_layers
// runs speculative decoding with method mtp (its MTP module is the draft,
// as vLLM's qwen3_5_mtp runs it): the module's weights are loaded beside
// the model's, a run conserves requests and tokens and repeats byte for
// byte, and acceptance 0.8 cuts TPOT at low load while acceptance 0 costs
// more than no speculation. Without the key, method mtp is refused naming
// the setting.
func TestQwen35MTPSpeculation(t *testing.T) {
	withMTP := strings.Replace(qwen35MoEText, `"dtype":"bfloat16"}`, `"dtype":"bfloat16","mtp_num_hidden_layers":1}`, 1)
	if withMTP == qwen35MoEText {
		t.Fatal("fixture changed: no mtp key added")
	}
	spec := func(a float64) func(*settings.Deployment) {
		return func(st *settings.Deployment) {
			st.Serving.MaxModelLen = 32768
			switch {
			case a == 0:
				st.Serving.Speculative = settings.Speculative{Method: roofline.SpecMTP, NumSpeculativeTokens: 2, MeanAcceptanceLength: 1}
			case a > 0:
				st.Serving.Speculative = settings.Speculative{Method: roofline.SpecMTP, NumSpeculativeTokens: 2, AcceptanceRate: a}
			}
		}
	}
	prep := func(a float64) *Prepared {
		p, err := prepareOnH100(t, withMTP, "qwen3.5-35b-a3b", false, spec(a))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	off, zero, good := prep(-1), prep(0), prep(0.8)
	if !(good.Capacity.WeightBytes > off.Capacity.WeightBytes) {
		t.Errorf("weights with the MTP module %.3g B, without %.3g B: want more", good.Capacity.WeightBytes, off.Capacity.WeightBytes)
	}
	y := `
seed: 5
clients:
  - name: c
    arrival: {process: poisson, rate: 1, num_requests: 30}
    prompt_tokens: {dist: uniform, min: 200, max: 800}
    output_tokens: {dist: uniform, min: 100, max: 300}
`
	tpot := func(p *Prepared) float64 {
		cfg := Config{Scheduler: p.Scheduler, StateBlocksPerRequest: p.StateBlocksPerRequest, StepModel: p.Step, Replicas: 1,
			CheckInvariants: true, Speculative: p.Speculative}
		res, _ := runConserved(t, y, cfg, 30)
		return res.Summary.Stats.TPOTms.Mean
	}
	tOff, tZero, tGood := tpot(off), tpot(zero), tpot(good)
	if !(tZero > tOff) || !(tGood < 0.8*tOff) {
		t.Errorf("TPOT ms: off %.2f, a=0 %.2f, a=0.8 %.2f; want a=0 above off and a=0.8 at least 20%% below", tOff, tZero, tGood)
	}
	_, err := prepareOnH100(t, qwen35MoEText, "qwen3.5-35b-a3b", false, spec(0.8))
	var fe *settings.FieldError
	if !errors.As(err, &fe) || fe.Key != "serving.speculative.method" {
		t.Errorf("mtp without MTP layers: %v, want a field error on serving.speculative.method", err)
	}
}
