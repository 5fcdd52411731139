package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// clock is a fake clock advanced by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newMeter(buf *bytes.Buffer, mode Mode, total int64) (*Meter, *clock) {
	c := &clock{t: time.Unix(1e9, 0)}
	return New(buf, Options{Mode: mode, What: "simulating", Unit: "req", Total: total, Now: c.now}), c
}

// The first frames show no rate: a rate over a few microseconds of work is
// meaningless (it once read 10380443 req/s).
func TestNoRateBeforeMinRateAge(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Bar, 1000)
	c.advance(200 * time.Millisecond)
	m.Set(10)
	if strings.Contains(buf.String(), "req/s") || strings.Contains(buf.String(), "ETA") {
		t.Errorf("rate shown after 0.2 s: %q", buf.String())
	}
	if !strings.Contains(buf.String(), "10/1,000 req") {
		t.Errorf("frame %q lacks the count", buf.String())
	}
}

// A steady 100 req/s reads as about 100 req/s (the unit is per second), and
// the ETA follows from it.
func TestSteadyRateAndETA(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Bar, 10000)
	for i := int64(1); i <= 50; i++ {
		c.advance(100 * time.Millisecond)
		m.Set(10 * i)
	}
	frames := strings.Split(buf.String(), "\r\033[K")
	last := frames[len(frames)-1]
	if !strings.Contains(last, "100 req/s") || !strings.Contains(last, "ETA 1m35s") {
		t.Errorf("last frame %q, want 100 req/s and ETA 1m35s (9500 left)", last)
	}
	m.Finish()
	if !strings.HasSuffix(buf.String(), "\r\033[K") {
		t.Errorf("finish did not clear the bar: %q", buf.String())
	}
}

// Off a terminal: a first line after FirstLineAfter, then one per
// LineEvery; none for a run shorter than FirstLineAfter, and a closing line
// only after some line was written.
func TestLinesEveryFewSeconds(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Lines, 100)
	c.advance(time.Second)
	m.Set(10)
	m.Set(20)
	if buf.Len() != 0 {
		t.Fatalf("line before %v: %q", FirstLineAfter, buf.String())
	}
	c.advance(FirstLineAfter - time.Second)
	m.Set(30) // at 2 s: the first line
	c.advance(time.Second)
	m.Set(40) // 1 s later: none
	c.advance(LineEvery)
	m.Set(60) // LineEvery after the first: the second
	c.advance(time.Second)
	m.Set(70)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "simulating: 30/100 req (30%)") ||
		!strings.HasPrefix(lines[1], "simulating: 60/100 req (60%)") || strings.Contains(buf.String(), "\r") {
		t.Fatalf("lines %q, want one at 30/100 and one at 60/100", lines)
	}
	m.Finish()
	if !strings.Contains(buf.String(), "simulating: done, 70 req in 9.0 s\n") {
		t.Errorf("no closing line: %q", buf.String())
	}

	buf.Reset()
	m, c = newMeter(&buf, Lines, 100)
	c.advance(time.Second)
	m.Set(100)
	m.Finish()
	if buf.Len() != 0 {
		t.Errorf("a 1 s run wrote %q", buf.String())
	}
}

// Off writes nothing, whatever is reported.
func TestOffSilent(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Off, 100)
	for i := int64(0); i <= 100; i++ {
		c.advance(time.Second)
		m.Set(i)
		m.Note("x")
	}
	m.Finish()
	if buf.Len() != 0 {
		t.Errorf("Off wrote %q", buf.String())
	}
}

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{count(0), "0"}, {count(999), "999"}, {count(1000), "1,000"}, {count(1234567), "1,234,567"},
		{rate(52310.4), "52,310"}, {rate(12.34), "12.3"}, {rate(0.5), "0.50"},
		{dur(400 * time.Millisecond), "0.4 s"}, {dur(12 * time.Second), "12 s"}, {dur(185 * time.Second), "3m05s"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// A bar frame fits the terminal: it is cut to the width, and a note takes
// the place of the bar graphic when both do not fit.
func TestBarFitsWidth(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: time.Unix(1e9, 0)}
	m := New(&buf, Options{Mode: Bar, What: "sweeping", Unit: "configs", Total: 16, Now: c.now, Width: 80})
	m.Note("12 probes; a100-80gb tp 8 at 52.44 req/s fail: ttft_p99 > 500 ms certain")
	c.advance(2 * time.Second)
	m.Set(3)
	frames := strings.Split(buf.String(), "\r\033[K")
	last := frames[len(frames)-1]
	if n := len([]rune(last)); n > 79 {
		t.Errorf("frame of %d columns: %q", n, last)
	}
	if strings.Contains(last, "[") || !strings.Contains(last, "12 probes") || !strings.Contains(last, "3/16 configs") {
		t.Errorf("frame %q: want the counts and the note without the bar graphic", last)
	}
}

// TestFinalCountNotThrottled: Set draws at most every 0.1% of the work, but
// the last item always gets through, so the closing line counts them all
// (it read "999,001 req" for a million-request run).
func TestFinalCountNotThrottled(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Lines, 1_000_000)
	c.advance(LineEvery)
	for done := int64(1); done <= 1_000_000; done++ {
		m.Set(done)
	}
	m.Finish()
	if !strings.Contains(buf.String(), "done, 1,000,000 req") {
		t.Errorf("closing line does not count every request: %q", buf.String())
	}
}

// A log line before anything is counted or totalled reads "what: 2.0 s".
func TestLineBeforeAnyCount(t *testing.T) {
	var buf bytes.Buffer
	m, c := newMeter(&buf, Lines, 0)
	c.advance(FirstLineAfter)
	m.Set(0)
	if got := buf.String(); got != "simulating: 2.0 s\n" {
		t.Errorf("line %q, want %q", got, "simulating: 2.0 s\n")
	}
}
