package roofline

import (
	"errors"
	"fmt"

	"github.com/roofsim/roofsim/internal/limits"
)

// Bounds on a phase request: the work of Phases is bounded whatever the request.
const (
	// MaxPhaseBatch bounds PhaseRequest.Batch (sequences priced per step).
	MaxPhaseBatch = 1 << 16
	// PhaseExactSteps is the number of steps a phase prices one by one; a longer
	// phase of identical-shape steps (decode, per-sequence prefill chunks) is
	// priced at the midpoints of PhaseExactSteps equal segments, each weighted by
	// its length (PhaseResult.SampledSteps says so). A step's cost is smooth in
	// the context length, so the midpoint rule is within 0.1% of the exact sum.
	PhaseExactSteps = 4096
	// MaxTokenSplitSteps bounds the steps of a UbatchTokens prefill, which
	// differ in shape and are priced one by one.
	MaxTokenSplitSteps = 1 << 22
)

// PhaseRequest is a llama-bench / llama-batched-bench style measurement:
// Batch sequences, each with Depth tokens of context already cached, process
// Prompt new tokens (the prefill phase, "ppN @ dD") and then generate Gen
// tokens (the decode phase, "tgN @ dD").
type PhaseRequest struct {
	// Prompt is the new prompt tokens per sequence (0 = no prefill row).
	Prompt int `json:"prompt"`
	// Depth is the cached context per sequence before the prompt.
	Depth int `json:"depth"`
	// Batch is the number of sequences processed together (>= 1).
	Batch int `json:"batch"`
	// Gen is the generated tokens per sequence (0 = no decode row).
	Gen int `json:"gen"`
	// Ubatch is the prefill chunk size per sequence; 0 = the whole prompt
	// in one step.
	Ubatch int `json:"ubatch"`
	// UbatchTokens, when > 0, replaces Ubatch by llama.cpp's n_ubatch: the
	// token budget of one forward pass summed over all sequences. The
	// Batch x Prompt prompt tokens are laid out sequence after sequence and
	// cut into steps of UbatchTokens tokens (llama.cpp's simple batch
	// split, as llama-batched-bench submits all prompts in one batch), so a
	// step may hold the end of one sequence and the start of the next.
	// Setting both Ubatch and UbatchTokens is an error.
	UbatchTokens int `json:"ubatch_tokens,omitempty"`
}

// Validate reports the first invalid field. Token counts lie in [0, 2^31-1] and so does
// their sum (the context a sequence reaches); Batch in [1, MaxPhaseBatch].
func (r PhaseRequest) Validate() error {
	for _, f := range []struct {
		key   string
		v, lo int
		hi    int
	}{
		{"prompt", r.Prompt, 0, limits.MaxTokens},
		{"depth", r.Depth, 0, limits.MaxTokens},
		{"batch", r.Batch, 1, MaxPhaseBatch},
		{"gen", r.Gen, 0, limits.MaxTokens},
		{"ubatch", r.Ubatch, 0, limits.MaxTokens},
		{"ubatch_tokens", r.UbatchTokens, 0, limits.MaxTokens},
	} {
		if err := limits.IntIn(f.v, f.lo, f.hi); err != nil {
			return &PhaseRequestError{Key: f.key, Err: err}
		}
	}
	switch {
	case r.Depth+r.Prompt+r.Gen > limits.MaxTokens:
		return &PhaseRequestError{Key: "gen", Err: fmt.Errorf("depth + prompt + gen = %d tokens of context, above %d", r.Depth+r.Prompt+r.Gen, limits.MaxTokens)}
	case r.UbatchTokens > 0 && r.Ubatch > 0:
		return &PhaseRequestError{Key: "ubatch_tokens", Err: errors.New("set either ubatch or ubatch_tokens, not both")}
	case r.UbatchTokens > 0 && r.Prompt > 0:
		if steps := (r.Batch*r.Prompt + r.UbatchTokens - 1) / r.UbatchTokens; steps > MaxTokenSplitSteps {
			return &PhaseRequestError{Key: "ubatch_tokens", Err: fmt.Errorf("the prefill takes %d steps of %d tokens; at most %d (raise ubatch_tokens)", steps, r.UbatchTokens, MaxTokenSplitSteps)}
		}
	}
	return nil
}

// PhaseResult is one phase of a PhaseRequest. The embedded Analysis covers
// the whole phase: FLOPs and DRAM bytes summed over its steps, intensity,
// the ridge and attainable rate of the model's GEMM peak, and times from the
// step model with the GPU's profile: TimeS is the predicted phase time
// (efficiencies and overheads included), ComputeTimeS / MemoryTimeS the
// summed times of its compute- / memory-bound operators, and Bound says
// which of the two dominates.
type PhaseResult struct {
	// Phase is "prefill" or "decode".
	Phase string `json:"phase"`
	Analysis
	// Steps is the number of forward passes in the phase.
	Steps int `json:"steps"`
	// Tokens is the new tokens processed (prefill) or generated (decode),
	// over all sequences.
	Tokens int `json:"tokens"`
	// TokensPerS is Tokens / TimeS.
	TokensPerS float64 `json:"tokens_per_s"`
	// RooflineTimeS is the phase time at efficiency 1 with no launch, step
	// or request overheads: per operator max(FLOPs/peak, bytes/bandwidth),
	// plus all-reduce bus bytes over the nominal interconnect bandwidth.
	RooflineTimeS float64 `json:"roofline_time_s"`
	// SampledSteps is the number of steps priced when the phase was longer
	// than PhaseExactSteps (each stands for a segment of steps); 0 when every
	// step was priced.
	SampledSteps int `json:"sampled_steps,omitempty"`
}

// Phases predicts the prefill and decode phases of r on m. Prefill runs in
// ceil(Prompt/Ubatch) steps, each holding one chunk of every sequence (the
// last chunk is sampled), or, with UbatchTokens, in
// ceil(Batch x Prompt / UbatchTokens) steps of consecutive tokens of the
// sequences taken in order; decode runs Gen steps, step g attending to
// Depth+Prompt+g+1 keys per sequence. Work is O(min(steps, PhaseExactSteps) x Batch)
// (see PhaseExactSteps), or O(steps + Batch) for a UbatchTokens prefill, whose steps
// Validate bounds.
func Phases(m *StepModel, r PhaseRequest) ([]PhaseResult, error) {
	return phases(m, r, PhaseExactSteps)
}

// phases is Phases with the number of steps priced exactly as a parameter (tests
// compare sampled with exact sums).
func phases(m *StepModel, r PhaseRequest, exact int) ([]PhaseResult, error) {
	if m == nil {
		return nil, fmt.Errorf("phases: step model is nil")
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var out []PhaseResult
	if r.Prompt > 0 && r.UbatchTokens > 0 {
		out = append(out, tokenSplitPrefill(m, r))
	} else if r.Prompt > 0 {
		ub := r.Ubatch
		if ub == 0 || ub > r.Prompt {
			ub = r.Prompt
		}
		in := StepInput{Prefills: make([]Chunk, r.Batch)}
		var tot phaseAcc
		// Steps 0..full-1 are whole chunks of ub tokens; the last step holds
		// the rest and is sampled.
		steps := (r.Prompt + ub - 1) / ub
		full := steps - 1
		tot.sum(full, exact, func(k int) {
			for i := range in.Prefills {
				in.Prefills[i] = Chunk{Tokens: ub, Cached: r.Depth + k*ub}
			}
			tot.add(m, &in, 1)
		}, func(k int, w float64) {
			for i := range in.Prefills {
				in.Prefills[i] = Chunk{Tokens: ub, Cached: r.Depth + k*ub}
			}
			tot.add(m, &in, w)
		})
		done := full * ub
		for i := range in.Prefills {
			in.Prefills[i] = Chunk{Tokens: r.Prompt - done, Cached: r.Depth + done, Sampled: true}
		}
		tot.add(m, &in, 1)
		name := fmt.Sprintf("pp%d", r.Prompt)
		out = append(out, tot.result(m, "prefill", name, r, r.Batch*r.Prompt))
	}
	if r.Gen > 0 {
		in := StepInput{Decodes: make([]int, r.Batch)}
		var tot phaseAcc
		step := func(g int, w float64) {
			for i := range in.Decodes {
				in.Decodes[i] = r.Depth + r.Prompt + g + 1
			}
			tot.add(m, &in, w)
		}
		tot.sum(r.Gen, exact, func(g int) { step(g, 1) }, step)
		name := fmt.Sprintf("tg%d", r.Gen)
		out = append(out, tot.result(m, "decode", name, r, r.Batch*r.Gen))
	}
	return out, nil
}

// sum prices n steps 0..n-1 of one shape: each by one when n <= exact, else the
// midpoints of exact equal segments, each weighted by its length.
func (p *phaseAcc) sum(n, exact int, one func(k int), mid func(k int, w float64)) {
	if n <= exact {
		for k := range n {
			one(k)
		}
		return
	}
	for j := range exact {
		lo, hi := j*n/exact, (j+1)*n/exact
		mid((lo+hi-1)/2, float64(hi-lo))
		p.sampled++
	}
}

// tokenSplitPrefill prices the prefill of r cut into steps of
// r.UbatchTokens tokens over the sequences in order: sequence i's chunk in a
// step sits on top of Depth plus the tokens of sequence i already done, and
// its last chunk is sampled.
func tokenSplitPrefill(m *StepModel, r PhaseRequest) PhaseResult {
	var tot phaseAcc
	in := StepInput{Prefills: make([]Chunk, 0, min(r.Batch, r.UbatchTokens/r.Prompt+2))}
	seq, done := 0, 0 // current sequence and its tokens already processed
	for seq < r.Batch {
		in.Prefills = in.Prefills[:0]
		for room := r.UbatchTokens; room > 0 && seq < r.Batch; {
			n := min(room, r.Prompt-done)
			in.Prefills = append(in.Prefills, Chunk{Tokens: n, Cached: r.Depth + done, Sampled: done+n == r.Prompt})
			room -= n
			done += n
			if done == r.Prompt {
				seq, done = seq+1, 0
			}
		}
		tot.add(m, &in, 1)
	}
	return tot.result(m, "prefill", fmt.Sprintf("pp%d", r.Prompt), r, r.Batch*r.Prompt)
}

// phaseAcc sums steps of one phase.
type phaseAcc struct {
	steps, sampled, evals    int
	flops, bytes, rooflineS  float64
	timeS, computeS, memoryS float64
}

// add prices one step standing for w steps of its shape.
func (p *phaseAcc) add(m *StepModel, in *StepInput, w float64) {
	var acc stepAcc
	m.eval(in, &acc)
	p.evals++
	p.steps += int(w)
	p.flops += w * acc.flops
	p.bytes += w * acc.bytes
	p.rooflineS += w * acc.rooflineS
	p.timeS += w * acc.c.Seconds
	p.computeS += w * acc.c.ComputeS
	p.memoryS += w * acc.c.MemoryS
}

func (p *phaseAcc) result(m *StepModel, phase, name string, r PhaseRequest, tokens int) PhaseResult {
	if r.Depth > 0 {
		name += fmt.Sprintf(" @ d%d", r.Depth)
	}
	if r.Batch > 1 {
		name += fmt.Sprintf(" x b%d", r.Batch)
	}
	peak := m.pGEMM.flops
	a := Analyze(Cost{Name: name, FLOPs: p.flops, ActBytes: p.bytes}, peak, m.bw)
	a.TimeS, a.ComputeTimeS, a.MemoryTimeS = p.timeS, p.computeS, p.memoryS
	if p.computeS >= p.memoryS {
		a.Bound = ComputeBound
	} else {
		a.Bound = MemoryBound
	}
	res := PhaseResult{Phase: phase, Analysis: a, Steps: p.steps, Tokens: tokens, RooflineTimeS: p.rooflineS}
	if p.sampled > 0 {
		res.SampledSteps = p.evals
	}
	if p.timeS > 0 {
		res.TokensPerS = float64(tokens) / p.timeS
	}
	return res
}
