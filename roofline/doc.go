// Package roofline turns transformer shapes into roofline costs: FLOPs and
// bytes per operator, attainable performance against a GPU's peaks, the
// memory-/compute-bound classification, and the step cost model that prices
// one forward pass of a batch. It knows nothing about time-ordering or
// requests; package sim asks it for one step at a time.
//
// # Reading order
//
// Operators and the roofline:
//
//   - precision.go: storage formats and their bits per element;
//   - cost.go: the Cost type (FLOPs and bytes of one operator);
//   - gemm.go, attention.go, elementwise.go, collective.go, moe.go
//     (MoEKernelCost): operator constructors with their formulas;
//   - optime.go: an operator's time under a profile's efficiencies
//     (OpSeconds), the per-operator formula of the step model;
//   - analysis.go: the pure roofline against a peak and a bandwidth.
//
// The step model (StepModel), in the order it is built and evaluated:
//
//   - precision_plan.go: which precision each weight group, the activations
//     and the KV cache are stored in and which peak each GEMM computes at
//     (planPrecisions, a pure function of the model, options and peaks);
//   - shapes.go: one GPU's share of the model under TP, EP and DP
//     (newStepShapes);
//   - efficiencies.go: the profile's efficiency model for each operator
//     group of the plan (pickEfficiencies);
//   - engine_terms.go: the engine's costs besides the kernels (EngineTerms:
//     per step, per request, host work, CUDA graphs, serving efficiencies);
//   - step.go: construction (NewStepModel) and pricing: aggregate sums a
//     step's requests, tokenOps prices the operators that depend only on
//     its token count, evalAgg adds attention, the LM head, the overheads
//     and the host time; apply is where every operator's time is summed;
//   - collective.go (allReduces), qknorm.go, moe.go, moe_deepgemm.go: the
//     collectives, the all-heads QK norm and the routed experts;
//   - step_cache.go: CachedStep, the same prices memoised (token-count
//     part, LM head), DecodeCost (a pure decode step from its request count
//     and KV sum) and the bounded prices DecodeSecondsBound and
//     StepSecondsBound;
//   - decode_run.go: DecodeRunPricer, the passes of a decode run, and
//     ReferenceDecodeRun, the naive definition it is tested against.
//
// Then phase.go (prefill / decode phases in llama-bench terms) and
// opsfile.go (operator tables read from files).
//
// # Adding a cost term
//
// Where it goes depends on what it is:
//
//   - an engine cost (per step, per request, per token, CPU work): a field of
//     EngineTerms with its unit and cause, filled by ProfileEngineTerms from
//     the hardware.Profile field that carries it (validated there), and a
//     method of EngineTerms (as overheadSeconds, hostSeconds) called from
//     evalAgg;
//   - a kernel (FLOPs and bytes): a Cost constructor beside its kind (gemm.go,
//     attention.go, elementwise.go, ...) whose doc gives the formula, priced
//     with StepModel.op; in tokenOps when it depends only on the step's token
//     count, else in evalAgg from the sums aggregate keeps (stepAgg);
//   - a collective: a call of allReduces, which prices every collective;
//   - a precision or shape rule: planPrecisions or newStepShapes, with a row
//     in TestPlanPrecisions or TestStepShapes.
//
// Tests to add: a hand computation from the term's definition (the
// formula written out for a small case, as TestQKVHand and
// TestProfileEngineTerms do), its Breakdown row (TestBreakdownSumsToCost
// must keep holding); the exactness of the fast paths with the term
// non-zero: TestCachedStepIsExact, TestDecodeCostIsExact and
// TestDecodeRunPricerMatchesReference (both against ReferenceDecodeRun),
// TestDecodeSecondsBound and TestStepSecondsBound (add a setup to
// decodeSetups that turns the term on); and determinism: a price is a pure
// function of the step (no map order, no state but the memo), sim's
// TestDeterminism keeps passing, and a term that defaults to zero leaves
// the examples' outputs byte-identical.
//
// How it reaches the fast path: a term priced in tokenOps is memoised with
// the token-count part and reaches CachedStep.Cost, DecodeCost and the
// bounded prices unchanged. A term priced in evalAgg must also be added,
// in evalAgg's order so that the floating-point sums are bit-identical, to
// decodeStep / decodeTail (DecodeCost), to prepareBound and
// StepSecondsBound (the bounded prices); if it depends on the KV lengths
// other than through their sum, DecodeCost and the bounds must refuse
// (ok = false, as for sliding-window layers) and DecodeRunPricer then
// prices each pass from its lengths. The simulator reaches all of these
// through CachedStep (sim.Run wraps the step model), DecodeRunPricer for
// pure decode steps and decode runs, and DecodeSecondsBound /
// StepSecondsBound where only whole nanoseconds matter.
package roofline
