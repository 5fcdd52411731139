package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"

	meter "github.com/roofsim/roofsim/internal/progress"
	"github.com/roofsim/roofsim/sweep"
	"golang.org/x/term"
)

// progressMode picks how progress is drawn on w: a bar on a terminal, a
// line every few seconds otherwise (CI logs, pipes), nothing when quiet.
// Progress goes to stderr only, so stdout stays clean for --json.
func progressMode(w io.Writer, quiet bool) meter.Mode {
	if quiet || w == nil {
		return meter.Off
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return meter.Bar
	}
	return meter.Lines
}

// newMeter starts a progress meter over total items of unit (0 = unknown)
// for the task what, kept alive by a heartbeat until Finish.
func newMeter(w io.Writer, total int64, quiet bool, what, unit string) *meter.Meter {
	width := 0
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil {
			width = cols
		}
	}
	m := meter.New(w, meter.Options{Mode: progressMode(w, quiet), What: what, Unit: unit, Total: total, Width: width})
	m.Heartbeat()
	return m
}

// progress is a meter over requests, the unit of sim run and observe.
type progress struct{ m *meter.Meter }

// newProgress returns a meter over total requests (0 = unknown).
func newProgress(w io.Writer, total int, quiet bool, what string) *progress {
	return &progress{m: newMeter(w, int64(total), quiet, what, "req")}
}

// set reports done items; it draws at most every 0.1% of the work.
func (p *progress) set(done int64) { p.m.Set(done) }

func (p *progress) finish() { p.m.Finish() }

// sweepProbeNote shows the probes run so far and the latest one: its
// configuration, rate and verdict, with the bound that failed.
func sweepProbeNote(m *meter.Meter) func(sweep.Config, sweep.Probe) {
	var n atomic.Int64
	return func(c sweep.Config, p sweep.Probe) {
		verdict := "pass"
		if !p.Pass {
			verdict = "fail: " + p.Failed
		}
		what := fmt.Sprintf("%.4g req/s", p.RateRPS)
		if p.ZeroLoad {
			what = "zero load"
		}
		if p.Saturation {
			what, verdict = "saturation", fmt.Sprintf("%.4g req/s", p.SaturationRPS)
		}
		m.Note(fmt.Sprintf("%d probes; %s tp %d at %s %s", n.Add(1), c.GPU, c.TP, what, verdict))
	}
}
