package sim

import "github.com/roofsim/roofsim/scheduler"

// A decode run may start with a mixed pass (scheduler/mixed_run.go): decodes
// beside prefill chunks that all complete their prompts, so that each item
// samples a token in pass 1 and decodes in every later pass of the run. That
// is the common pass of a loaded instance, which admits about one request a
// pass. planDecodeRun prices pass 1 as formed (the mixed step) and passes 2..
// as decode passes over the items still running; finishStep and
// accountPasses account pass 1 item by item (first tokens included) and the
// later passes as a decode run's, since every live item had a token in the
// pass before.

// mixedRunLengths returns the KV length each item of the mixed batch b
// attends to with the token it samples in pass 1, Context+Tokens: the
// length from which its decodes in passes 2.. grow by one a pass (a decode
// item's length in pass 1, a prefill item's prompt). Item order, as the
// decode run's Lengths. O(items).
func (in *instance) mixedRunLengths(b *scheduler.Batch) []int {
	in.runLens = in.runLens[:0]
	for k := range b.Items {
		it := &b.Items[k]
		in.runLens = append(in.runLens, it.Context+it.Tokens)
	}
	return in.runLens
}
