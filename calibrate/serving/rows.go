package serving

import "fmt"

// Row is one measured closed-loop serving benchmark: Concurrency
// clients each sending a request of ISL prompt tokens and OSL output tokens
// as soon as their previous one finishes, with the measured mean TTFT and
// TPOT in milliseconds.
type Row struct {
	ID        string
	Line      int
	Model     string // as written, e.g. "meta-llama/Llama-3.1-70B"
	GPU       string // as written, e.g. "h100_sxm"
	Precision string // weight precision, e.g. "fp8"
	// Engine and Version are the serving engine and its release as written
	// ("vllm", "0.12.0"; "" when the table does not say). A vLLM release
	// picks the routed experts' kernel path (engine.Engine.MoEKernel).
	Engine, Version string
	ISL, OSL        int
	Concurrency     int
	TP              int
	// MoETP, EP and DP are the table's moe_tp_size, moe_ep_size and
	// attention_dp_size as written (0 when absent); ResolveLayout turns
	// them into the deployment's EP and DP.
	MoETP, EP, DP int
	TTFTms        float64
	TPOTms        float64
	// Harness names the benchmark harness that measured the row, as the
	// table's provenance says ("" when it does not). A harness is a way of
	// measuring (its client, its requests per client), so rows of one
	// harness share its campaign terms whatever their model or GPU.
	Harness string
}

// ResolveLayout derives the engine's expert- and data-parallel degrees from
// the row's columns. The experts run over MoETP x EP GPUs and attention over
// TP x DP: an empty attention_dp_size means the data-parallel degree that
// makes the two counts equal (vLLM runs its MoE layers over every GPU of
// the DP x TP engine), e.g. tp_size 1 with moe_tp_size 2 is DP 2. After it,
// EP and DP are >= 1 and TP x DP = MoETP x EP when MoETP was given.
//
// Tables of dense models carry moe_tp_size = moe_ep_size = 1 whatever the
// TP: a row whose experts would run on one GPU has no expert layout, and
// only its attention_dp_size is read.
//
// A degree of 0 is not set, as AIConfigurator writes it: moe_tp_size and
// moe_ep_size 0 on a dense row are the same as absent, and an expert
// degree given without moe_tp_size (0) splits the experts by EP alone
// (moe_tp_size 1).
func (r *Row) ResolveLayout() error {
	if r.MoETP == 0 && r.EP > 1 {
		r.MoETP = 1
	}
	if r.EP == 0 {
		r.EP = 1
	}
	if r.MoETP == 0 || r.MoETP*r.EP == 1 {
		r.EP = 1
		if r.DP == 0 {
			r.DP = 1
		}
		return nil
	}
	experts := r.MoETP * r.EP
	if r.DP == 0 {
		if experts%r.TP != 0 {
			return fmt.Errorf("moe_tp_size %d x moe_ep_size %d = %d GPUs is not a multiple of tp_size %d", r.MoETP, r.EP, experts, r.TP)
		}
		r.DP = max(experts/r.TP, 1)
	}
	if r.TP*r.DP != experts {
		return fmt.Errorf("tp_size %d x attention_dp_size %d = %d GPUs, but moe_tp_size %d x moe_ep_size %d = %d", r.TP, r.DP, r.TP*r.DP, r.MoETP, r.EP, experts)
	}
	return nil
}

// Clients is the benchmark's number of concurrent clients: Concurrency per
// attention-DP rank, times DP. AIConfigurator's tables record batch_size
// per DP rank: the MiniMax-M2.5 rows with attention_dp_size 4 give
// silicon_concurrency = 4 x batch_size in their provenance, and a DP row's
// TPOT matches the TP layout's at DP times its batch_size.
func (r *Row) Clients() int { return r.Concurrency * max(r.DP, 1) }

// Layout names the row's parallel layout: "tp4", or "tp4 dp4 ep16".
func (r *Row) Layout() string {
	s := fmt.Sprintf("tp%d", r.TP)
	if r.DP > 1 {
		s += fmt.Sprintf(" dp%d", r.DP)
	}
	if r.EP > 1 {
		s += fmt.Sprintf(" ep%d", r.EP)
	}
	return s
}
