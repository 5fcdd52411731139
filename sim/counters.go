package sim

// Counters are a run's totals as run.json records them (`sim run --out` and
// the web view's downloads): request and token counts, the engine's work
// and the simulated span.
type Counters struct {
	Arrived               int64   `json:"arrived"`
	Completed             int64   `json:"completed"`
	Rejected              int64   `json:"rejected"`
	InFlight              int64   `json:"in_flight"`
	PromptTokens          int64   `json:"prompt_tokens"`
	OutputTokensGenerated int64   `json:"output_tokens_generated"`
	Steps                 int64   `json:"steps"`
	Events                int64   `json:"events"`
	Preemptions           int64   `json:"preemptions"`
	SimulatedS            float64 `json:"simulated_s"`
	// OffloadedBlocks and ReloadedBlocks: Result's; left out when 0.
	OffloadedBlocks int64 `json:"kv_offloaded_blocks,omitempty"`
	ReloadedBlocks  int64 `json:"kv_reloaded_blocks,omitempty"`
}

// Counters returns r's totals; SimulatedS is r.End in seconds.
func (r *Result) Counters() Counters {
	return Counters{
		Arrived: r.Arrived, Completed: r.Completed, Rejected: r.Rejected, InFlight: r.InFlight,
		PromptTokens: r.PromptTokens, OutputTokensGenerated: r.OutputTokensGenerated,
		Steps: r.Steps, Events: r.Events, Preemptions: r.Preemptions, SimulatedS: r.End.Seconds(),
		OffloadedBlocks: r.OffloadedBlocks, ReloadedBlocks: r.ReloadedBlocks,
	}
}
