package roofline

// StepReport is one step's price listed by operator: the rows of
// Breakdown, each with its share of the step and the rates it achieves,
// and the step's cost split by bound. It answers "what dominates this
// step" for any mix of prefill chunks and decodes (a mixed step of
// chunked prefill included), which the phase analysis (Phases) cannot:
// it prices prefill and decode apart.
type StepReport struct {
	// Tokens is the step's new tokens (prefill chunk tokens plus one per
	// decode); Requests its prefill chunks plus decodes.
	Tokens   int `json:"tokens"`
	Requests int `json:"requests"`
	// Cost is Cost(in): seconds split by what bounds each operator.
	Cost StepCost `json:"cost"`
	// Ops are Breakdown(in)'s rows in its order; their Seconds sum to
	// Cost.Seconds.
	Ops []OpShare `json:"ops"`
}

// OpShare is one Breakdown row with derived figures.
type OpShare struct {
	OpTime
	// SharePct is Seconds / step seconds x 100 (0 for an empty step).
	SharePct float64 `json:"share_pct"`
	// AchievedTFLOPS is FLOPs / Seconds / 1e12 and AchievedGBps
	// Bytes / Seconds / 1e9: the rates the row's priced time implies,
	// launches and fixed costs included (0 when Seconds is 0).
	AchievedTFLOPS float64 `json:"achieved_tflops"`
	AchievedGBps   float64 `json:"achieved_gbps"`
}

// Report prices in and lists it by operator (see StepReport). It
// allocates and is meant for reports; O(len(Prefills) + len(Decodes)).
func (m *StepModel) Report(in *StepInput) StepReport {
	rows := m.Breakdown(in)
	r := StepReport{Cost: m.Cost(in), Ops: make([]OpShare, len(rows))}
	for _, ch := range chunksOf(in) {
		if ch.Tokens > 0 {
			r.Tokens += ch.Tokens
			r.Requests++
		}
	}
	r.Tokens += len(in.Decodes)
	r.Requests += len(in.Decodes)
	for i, o := range rows {
		s := OpShare{OpTime: o}
		if r.Cost.Seconds > 0 {
			s.SharePct = o.Seconds / r.Cost.Seconds * 100
		}
		if o.Seconds > 0 {
			s.AchievedTFLOPS = o.FLOPs / o.Seconds / 1e12
			s.AchievedGBps = o.Bytes / o.Seconds / 1e9
		}
		r.Ops[i] = s
	}
	return r
}
