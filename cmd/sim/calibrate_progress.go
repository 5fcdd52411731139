package main

import (
	"io"

	meter "github.com/roofsim/roofsim/internal/progress"
)

// familyMeter starts a progress meter over the operator families a
// calibrate command fits (what: its task), kept alive by a heartbeat so
// that a family that takes minutes still shows a line every few seconds.
// The returned func is the fit's Progress callback: done of total
// families, the one just fitted named ("" for none yet). Finish the meter
// when the fit returns.
func familyMeter(w io.Writer, quiet bool, what string) (*meter.Meter, func(done, total int, family string)) {
	bar := newMeter(w, 0, quiet, what, "families")
	return bar, func(done, total int, family string) {
		if family != "" {
			bar.Note(family + " fitted")
		}
		bar.SetTotal(int64(total))
		bar.Set(int64(done))
	}
}
