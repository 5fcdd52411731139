package workload

import (
	"fmt"
	"testing"
)

// closedLoopGrid is a grid of closed-loop clients (num_requests, concurrency, ramp_up,
// session turns) whose request count must be exact whatever the service time.
func closedLoopGrid() []Client {
	var out []Client
	for _, n := range []int{1, 3, 10, 37} {
		for _, conc := range []int{1, 4, 8, 64} {
			for _, ramp := range []Duration{0, Duration(50e6), Duration(10e9)} {
				for _, turns := range []int{0, 1, 3} {
					c := Client{
						Name: fmt.Sprintf("n%d-c%d-r%s-t%d", n, conc, ramp, turns), Concurrency: conc, NumRequests: n, RampUp: ramp,
						PromptTokens: LengthDist{Dist: DistConstant, Value: 10}, OutputTokens: LengthDist{Dist: DistConstant, Value: 5},
					}
					if turns > 0 {
						c.Session = &Session{Turns: LengthDist{Dist: DistConstant, Value: turns}}
					}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// TestClosedLoopCountIsExact: a closed-loop client sends exactly num_requests requests,
// every session turn counted, with or without a ramp-up, for service times shorter and
// longer than the ramp's spacing, and Totals says so in advance. Sessions are cut short
// only by the budget: each numbers its turns 1, 2, ... and every one but the last ends
// with its full turns.
func TestClosedLoopCountIsExact(t *testing.T) {
	for _, c := range closedLoopGrid() {
		for _, serviceNS := range []int64{1e6, 3e9} {
			sp := &Spec{Clients: []Client{c}}
			g, err := NewGenerator(sp, 1)
			if err != nil {
				t.Fatal(err)
			}
			want := c.NumRequests
			if n, known := g.Totals(); !known || n != want {
				t.Errorf("%s: Totals = %d, %v; want %d", c.Name, n, known, want)
			}
			reqs := drive(t, g, serviceNS)
			turns := map[uint64]int{}
			for _, r := range reqs {
				turns[r.SessionID]++
				if c.Session != nil && r.Turn != turns[r.SessionID] {
					t.Errorf("%s: session %d's request %d is numbered turn %d", c.Name, r.SessionID, turns[r.SessionID], r.Turn)
				}
			}
			if len(reqs) != want {
				t.Errorf("%s, service %d ns: %d requests, want %d", c.Name, serviceNS, len(reqs), want)
			}
			if c.Session != nil {
				// At most Concurrency sessions are open when the budget runs out.
				short := 0
				for _, n := range turns {
					if n < c.Session.Turns.Value {
						short++
					}
				}
				if short > c.Concurrency {
					t.Errorf("%s, service %d ns: %d sessions cut short, more than the %d users", c.Name, serviceNS, short, c.Concurrency)
				}
			}
		}
	}
}

// TestClosedLoopRampPastDuration: a user whose ramp-up start falls at or after a
// duration-bounded client's duration never sends.
func TestClosedLoopRampPastDuration(t *testing.T) {
	s := mustParse(t, `
clients:
  - concurrency: 4
    duration: 5s
    ramp_up: 8s
    prompt_tokens: {dist: constant, value: 8}
    output_tokens: {dist: constant, value: 8}
`)
	g, err := NewGenerator(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Starts at 0, 2, 4 and 6 s; service 10 s, so nothing follows before 5 s.
	reqs := drive(t, g, 10e9)
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (the user starting at 6 s is past the 5 s duration)", len(reqs))
	}
}
