// Package progress reports how far a long computation has got: a redrawn
// bar with rate and ETA on a terminal, or a short line every few seconds
// on a log (CI, pipes). It writes only to the writer it is given; the
// libraries that do the work report through plain callbacks and never
// import it.
//
// The rate is an exponentially smoothed average over a few seconds of
// updates, and it is shown only once enough time has passed for it to
// mean something (MinRateAge), so the first frame never shows a rate
// computed over microseconds.
package progress

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how a Meter draws.
type Mode int

const (
	// Off draws nothing.
	Off Mode = iota
	// Bar redraws one line in place (a terminal).
	Bar
	// Lines writes a line after FirstLineAfter, then every LineEvery (a log).
	Lines
)

// Timing of the display.
const (
	// MinRateAge is how long a meter runs before it shows a rate or ETA.
	MinRateAge = time.Second
	// RateWindow is the time constant of the rate's exponential smoothing.
	RateWindow = 3 * time.Second
	// BarEvery is the shortest interval between two bar frames.
	BarEvery = 100 * time.Millisecond
	// FirstLineAfter is when a log gets its first line: a run longer than
	// a couple of seconds shows progress, a shorter one stays silent.
	FirstLineAfter = 2 * time.Second
	// LineEvery is the interval between two log lines after the first.
	LineEvery = 5 * time.Second
	barWidth  = 16
	// sparseItems is the count below which the rate is the average since
	// the start rather than a smoothed window.
	sparseItems = 100
)

// Meter counts done items out of a total and draws them. Set and Add may
// be called from several goroutines; a call that draws nothing costs one
// atomic load and a comparison, so a per-item hot loop may call it.
type Meter struct {
	w     io.Writer
	mode  Mode
	what  string // the task ("simulating")
	unit  string // the items ("req")
	total int64  // 0: unknown
	now   func() time.Time
	width int

	next atomic.Int64 // done count at which the next draw is considered
	step int64

	mu       sync.Mutex
	start    time.Time
	lastDraw time.Time
	lastT    time.Time
	lastDone int64
	rate     float64 // smoothed items per second; 0 until MinRateAge
	done     int64
	note     string
	drawn    bool // a bar frame is on screen
	lines    int  // log lines written
	finished bool
}

// Options configures New.
type Options struct {
	Mode Mode
	// What names the task ("simulating"); Unit the items ("req").
	What, Unit string
	// Total is the number of items (0 = unknown: no bar, no ETA).
	Total int64
	// Now is the clock (nil = time.Now); tests pass a fake one.
	Now func() time.Time
	// Width is the terminal's width in columns: a bar frame is cut to one
	// column less, so it never wraps (0 = 80).
	Width int
}

// New returns a meter drawing on w.
func New(w io.Writer, o Options) *Meter {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	m := &Meter{w: w, mode: o.Mode, what: o.What, unit: o.Unit, total: max(o.Total, 0), now: now, width: o.Width}
	if m.width <= 0 {
		m.width = 80
	}
	if m.mode == Off {
		m.next.Store(math.MaxInt64)
		return m
	}
	// Look at the clock about every 0.1% of the work (every item when the
	// total is unknown or small).
	m.step = max(m.total/1000, 1)
	m.start = now()
	m.lastT = m.start
	m.lastDraw = m.start
	return m
}

// Set reports that done items are finished.
func (m *Meter) Set(done int64) {
	if done < m.next.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished || done < m.done {
		return
	}
	m.done = done
	next := done + m.step
	if m.total > done {
		// The last item is always taken, so the closing line counts all.
		next = min(next, m.total)
	}
	m.next.Store(next)
	m.tick(false)
}

// SetTotal sets the number of items once it is known (a meter may start
// before its work is counted).
func (m *Meter) SetTotal(total int64) {
	if m.mode == Off {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if total != m.total {
		m.total = max(total, 0)
		m.step = max(m.total/1000, 1)
	}
}

// Note sets a short status shown after the counts ("probe 3: TTFT p99
// 612 ms > 500 ms"); "" clears it.
func (m *Meter) Note(s string) {
	if m.mode == Off {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note = s
}

// Finish clears the bar; on a log that got at least one line it writes a
// last one with the elapsed time, so short runs stay silent.
func (m *Meter) Finish() {
	if m.mode == Off {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished {
		return
	}
	m.finished = true
	m.next.Store(math.MaxInt64)
	switch m.mode {
	case Bar:
		if m.drawn {
			fmt.Fprint(m.w, "\r\033[K")
		}
	case Lines:
		if m.lines > 0 {
			fmt.Fprintf(m.w, "%s: done, %s %s in %s\n", m.what, count(m.done), m.unit, dur(m.now().Sub(m.start)))
		}
	}
}

// Heartbeat redraws every interval (BarEvery on a terminal, LineEvery on
// a log) until Finish, so that a display stays alive while one item takes
// long (a slow fit, a sweep's last configuration). It uses the real clock.
func (m *Meter) Heartbeat() {
	if m.mode == Off {
		return
	}
	every := BarEvery
	if m.mode == Lines {
		every = time.Second
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for range t.C {
			m.mu.Lock()
			if m.finished {
				m.mu.Unlock()
				return
			}
			m.tick(false)
			m.mu.Unlock()
		}
	}()
}

// tick updates the rate and draws when due. m.mu is held.
func (m *Meter) tick(force bool) {
	t := m.now()
	if dt := t.Sub(m.lastT); dt >= BarEvery {
		inst := float64(m.done-m.lastDone) / dt.Seconds()
		a := 1 - math.Exp(-dt.Seconds()/RateWindow.Seconds())
		switch age := t.Sub(m.start).Seconds(); {
		case m.done < sparseItems:
			// A few slow items (fits, configurations): the average since
			// the start is steadier than any window.
			m.rate = float64(m.done) / age
		case m.rate == 0:
			m.rate = inst
		default:
			m.rate += a * (inst - m.rate)
		}
		m.lastT, m.lastDone = t, m.done
	}
	switch m.mode {
	case Bar:
		if force || t.Sub(m.lastDraw) >= BarEvery {
			m.lastDraw = t
			m.drawn = true
			f := []rune(m.frame(t, true))
			if len(f) > m.width-1 && m.note != "" {
				// A note says more than the bar graphic: drop the graphic.
				f = []rune(m.frameWith(t, true, false))
			}
			if len(f) > m.width-1 {
				f = f[:m.width-1]
			}
			fmt.Fprintf(m.w, "\r\033[K%s", string(f))
		}
	case Lines:
		due := LineEvery
		if m.lines == 0 {
			due = FirstLineAfter
		}
		if force || t.Sub(m.lastDraw) >= due {
			m.lastDraw = t
			m.lines++
			fmt.Fprintf(m.w, "%s\n", m.frame(t, false))
		}
	}
}

// frame is one status line at time t.
func (m *Meter) frame(t time.Time, bar bool) string { return m.frameWith(t, bar, bar) }

// frameWith is frame, with the bar graphic only when graphic is set.
func (m *Meter) frameWith(t time.Time, bar, graphic bool) string {
	var b strings.Builder
	b.WriteString(m.what)
	if !bar {
		b.WriteByte(':')
	}
	age := t.Sub(m.start)
	if m.total > 0 {
		f := math.Min(float64(m.done)/float64(m.total), 1)
		switch {
		case graphic:
			n := int(f * barWidth)
			fmt.Fprintf(&b, " %3.0f%% [%s%s]", 100*f, strings.Repeat("=", n), strings.Repeat(" ", barWidth-n))
		case bar:
			fmt.Fprintf(&b, " %3.0f%%", 100*f)
		}
		fmt.Fprintf(&b, " %s/%s %s", count(m.done), count(m.total), m.unit)
		if !bar {
			fmt.Fprintf(&b, " (%.0f%%)", 100*f)
		}
	} else if m.done > 0 {
		fmt.Fprintf(&b, " %s %s", count(m.done), m.unit)
	}
	eta := false
	if age >= MinRateAge && m.rate > 0 {
		fmt.Fprintf(&b, ", %s %s/s", rate(m.rate), m.unit)
		if m.total > 0 && m.done < m.total {
			left := time.Duration(float64(m.total-m.done) / m.rate * float64(time.Second))
			fmt.Fprintf(&b, ", ETA %s", dur(left))
			eta = true
		}
	}
	// The elapsed time when there is no ETA (a bar frame must fit in 80
	// columns with both).
	if !eta {
		sep := ", "
		if m.total <= 0 && m.done <= 0 && !(age >= MinRateAge && m.rate > 0) {
			sep = " " // nothing counted yet: "fitting: 2.0 s", not "fitting:, 2.0 s"
		}
		fmt.Fprintf(&b, "%s%s", sep, dur(age))
	}
	if m.note != "" {
		b.WriteString(" | ")
		b.WriteString(m.note)
	}
	return b.String()
}

// count formats n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// rate formats items per second to about three significant digits.
func rate(r float64) string {
	switch {
	case r >= 100:
		return count(int64(math.Round(r)))
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	default:
		return fmt.Sprintf("%.2f", r)
	}
}

// dur formats a duration for a human: 0.4 s, 12 s, 3m05s.
func dur(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
	}
}
