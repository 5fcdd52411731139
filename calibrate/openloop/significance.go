package openloop

import (
	"math"

	"github.com/roofsim/roofsim/calibrate"
)

// The choice between candidates asks more than a lower held-out median: a
// candidate with more terms must beat the current choice in at least
// calibrate.SelectionLevel of calibrate.SelectionResamples paired
// bootstrap resamples of the held-out stages (each resample draws stages
// with replacement and compares the two candidates' median absolute TPOT
// errors over the same draw). With some twenty stages a difference of a
// few tenths of a point is inside the resampling spread and does not
// count.

// selectionSeed seeds the resampling, so a fit's choice is reproducible.
const selectionSeed = 0x6f70656e6c6f6f70

// replaces reports whether cand, taken after cur, becomes the choice: its
// cross-validated TPOT error is lower by more than 0.1 points and it beat
// cur in at least calibrate.SelectionLevel of the paired resamples (cand.BeatShare).
func replaces(cand, cur CandidateResult) bool {
	return cand.CrossValidated.TPOT < cur.CrossValidated.TPOT-0.1 && cand.BeatShare >= calibrate.SelectionLevel
}

// beatShare is the share of paired bootstrap resamples of the held-out
// stages in which the candidate's median absolute error (cand[i], %) is
// strictly below the current choice's (cur[i], the same stage i). It is 0
// when the two do not hold the same number of stages or hold none.
func beatShare(cand, cur []float64) float64 {
	return calibrate.MedianBeatShare(cand, cur, selectionSeed)
}

// heldOutAPE is the absolute held-out TPOT error (%) of every sustained
// stage of stages, in order (stages not held out, NaN, are skipped).
func heldOutAPE(stages []StageResult) []float64 {
	var out []float64
	for _, s := range stages {
		if math.IsNaN(s.HeldOut.SimTPOT) {
			continue
		}
		out = append(out, math.Abs(pct(s.HeldOut.SimTPOT, s.HeldOut.RealTPOT)))
	}
	return out
}
