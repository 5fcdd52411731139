package main

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a progress bar on stderr, shown only when stderr is a
// terminal and not silenced; otherwise every method is a no-op.
type progress struct {
	bar  *progressbar.ProgressBar
	last int64
	step int64
}

// newProgress returns a bar over total items (0 = unknown: a spinner).
func newProgress(w io.Writer, total int, quiet bool, what string) *progress {
	f, ok := w.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	max := int64(total)
	if max <= 0 {
		max = -1
	}
	bar := progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	)
	step := max / 1000
	if step < 1 {
		step = 1
	}
	return &progress{bar: bar, step: step}
}

// set reports done items; it updates the bar at most every 0.1% of the work.
func (p *progress) set(done int64) {
	if p.bar == nil || done-p.last < p.step {
		return
	}
	p.last = done
	_ = p.bar.Set64(done)
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
