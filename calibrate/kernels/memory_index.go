package kernels

import (
	"fmt"

	"github.com/roofsim/roofsim/calibrate"
	"github.com/roofsim/roofsim/hardware"
)

// MemoryIndexFolds is the number of shape slices (batch x KV heads ranges,
// sliceKey) the memory-index selection holds out in turn.
const MemoryIndexFolds = 3

// MemoryIndexChoice records how a family's memory curve index was chosen:
// the family fitted with its curve read at the bytes (the incumbent) and at
// the bytes per (request, KV head) pair (hardware.MemoryByPairBytes), each
// shape slice of its rows predicted by the fits on the other slices.
type MemoryIndexChoice struct {
	Family string `json:"family"`
	// Folds is the number of shape slices held out.
	Folds int `json:"folds"`
	// Bytes and PairBytes are the held-out errors with each index.
	Bytes     calibrate.APEStats `json:"bytes"`
	PairBytes calibrate.APEStats `json:"pair_bytes"`
	// Share is the share of paired resamples in which PairBytes' median is
	// below Bytes'.
	Share float64 `json:"share"`
	// Kept: the pair-bytes index is used (Share >= calibrate.SelectionLevel).
	Kept bool `json:"kept"`
}

// String is one line: the family, the held-out medians and the decision.
func (c MemoryIndexChoice) String() string {
	verdict := "bytes kept"
	if c.Kept {
		verdict = "pair_bytes chosen"
	}
	return fmt.Sprintf("%s memory index: shape-slice median %.1f%% (bytes) -> %.1f%% (bytes per request and KV head) (%d slices, %d rows), wins %.0f%% of paired resamples: %s",
		c.Family, c.Bytes.MedianAPE, c.PairBytes.MedianAPE, c.Folds, c.Bytes.N, 100*c.Share, verdict)
}

// withMemoryIndex is e with its memory curve read at idx. When that changes
// the index, the curve's Half (on the old index's scale) is dropped so that
// a fit starts it at the median index value.
func withMemoryIndex(e hardware.OpEfficiency, idx hardware.MemoryIndex) hardware.OpEfficiency {
	if e.MemoryIndex != idx {
		e.MemoryIndex = idx
		e.Memory.Half = 0
	}
	return e
}

// start is the efficiency a fit of f starts from: f's entry in def, its
// memory curve read at f.memIndex.
func (f opFamily) start(def *hardware.Profile) hardware.OpEfficiency {
	return withMemoryIndex(f.get(def), f.memIndex)
}

// selectMemoryIndex chooses f's memory index on f's own rows: the rows are
// cut into MemoryIndexFolds shape slices (sortedFolds on sliceKey, as
// ShapeSliceCV cuts them), each slice is predicted by f fitted on the other
// slices with each index (one start each: 2 x folds fits), and the
// pair-bytes index is kept when its held-out median beats the bytes index's
// in at least calibrate.SelectionLevel of paired resamples
// (calibrate.MedianBeatShare). nil when f offers no choice or its rows have
// fewer than two slices. Deterministic for a seed.
func selectMemoryIndex(f opFamily, def *hardware.Profile, seed uint64) (*MemoryIndexChoice, error) {
	if !f.pairBytes || len(f.samples) == 0 {
		return nil, nil
	}
	keys := make([]float64, len(f.samples))
	for i, s := range f.samples {
		keys[i], _ = sliceKey(s)
	}
	idx, fold, last := sortedFolds(keys, MemoryIndexFolds)
	if last == 0 {
		return nil, nil
	}
	fseed := familySeed(seed, f.name)
	cands := []hardware.MemoryIndex{hardware.MemoryByBytes, hardware.MemoryByPairBytes}
	type out struct {
		apes []float64
		err  error
	}
	outs := make([]out, len(cands)*(last+1))
	// Each (index, slice) fit is independent and collected by position, so
	// the outcome does not depend on scheduling.
	onTwoWorkers(len(outs), func(i int) {
		c, h := cands[i/(last+1)], i%(last+1)
		train, hold := foldSplit(f.samples, idx, fold, h)
		fit, err := fitTiled(train, withMemoryIndex(f.get(def), c), f.tiles, fseed, 1)
		if err != nil {
			outs[i].err = err
			return
		}
		outs[i].apes = apes(hold, fit.Efficiency)
	})
	var got [2][]float64
	for i, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		c := i / (last + 1)
		got[c] = append(got[c], o.apes...)
	}
	ch := &MemoryIndexChoice{Family: f.name, Folds: last + 1,
		Bytes: calibrate.SummarizeAPE(got[0]), PairBytes: calibrate.SummarizeAPE(got[1])}
	ch.Share = calibrate.MedianBeatShare(got[1], got[0], fseed)
	ch.Kept = ch.Share >= calibrate.SelectionLevel
	return ch, nil
}

// applyMemoryIndexSelection runs selectMemoryIndex on every family of fams
// that offers the pair-bytes index and sets its memIndex to the choice. It
// returns the choices in family order.
func applyMemoryIndexSelection(fams []opFamily, def *hardware.Profile, seed uint64) ([]MemoryIndexChoice, error) {
	var out []MemoryIndexChoice
	for i := range fams {
		c, err := selectMemoryIndex(fams[i], def, seed)
		if err != nil {
			return nil, fmt.Errorf("%s: memory-index selection: %w", fams[i].name, err)
		}
		if c == nil {
			continue
		}
		fams[i].memIndex = hardware.MemoryByBytes
		if c.Kept {
			fams[i].memIndex = hardware.MemoryByPairBytes
		}
		out = append(out, *c)
	}
	return out, nil
}
