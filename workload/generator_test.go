package workload

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func mustParse(t testing.TB, y string) *Spec {
	t.Helper()
	s, err := Parse([]byte(y), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drive runs a generator like an engine with infinite capacity: every request completes
// serviceNS after it arrives. It returns every request in creation order (the next
// known arrival is fetched ahead, as an engine scheduling its arrival event would).
func drive(t testing.TB, g *Generator, serviceNS int64) []Request {
	t.Helper()
	var out []Request
	// pending follow-ups ordered by arrival; small workloads, so a slice suffices.
	var inflight []Request
	next, ok := g.NextArrival()
	if ok {
		out = append(out, next)
	}
	for ok || len(inflight) > 0 {
		// Take whichever comes first: the next known arrival or the earliest completion.
		ci := -1
		for i, r := range inflight {
			if ci < 0 || r.ArrivalNS+serviceNS < inflight[ci].ArrivalNS+serviceNS {
				ci = i
			}
		}
		if ok && (ci < 0 || next.ArrivalNS <= inflight[ci].ArrivalNS+serviceNS) {
			inflight = append(inflight, next)
			if next, ok = g.NextArrival(); ok {
				out = append(out, next)
			}
			continue
		}
		done := inflight[ci]
		inflight = append(inflight[:ci], inflight[ci+1:]...)
		if f, more := g.OnComplete(done, done.ArrivalNS+serviceNS); more {
			if f.ArrivalNS < done.ArrivalNS+serviceNS {
				t.Fatalf("follow-up %d arrives at %d before its trigger finished at %d", f.ID, f.ArrivalNS, done.ArrivalNS+serviceNS)
			}
			out = append(out, f)
			inflight = append(inflight, f)
		}
		if len(out) > 1e6 {
			t.Fatal("runaway generator")
		}
	}
	return out
}

const mixedSpec = `
seed: 42
clients:
  - name: chat
    arrival: {process: poisson, rate: 10, num_requests: 300}
    prefix: {groups: 5, tokens: 100}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256}
    output_tokens: {dist: exponential, mean: 100}
  - name: multi
    arrival: {process: gamma, cv: 2, rate: 2, num_requests: 40}
    prefix: {groups: 2, tokens: 50}
    session: {turns: {dist: uniform, min: 2, max: 5}, think_time: 3s}
    prompt_tokens: {dist: normal, mean: 100, std: 30}
    output_tokens: {dist: constant, value: 40}
  - name: batch
    concurrency: 8
    num_requests: 50
    think_time: 1s
    prompt_tokens: {dist: uniform, min: 10, max: 2000}
    output_tokens: {dist: constant, value: 64}
`

func TestDeterminism(t *testing.T) {
	s := mustParse(t, mixedSpec)
	run := func(seed uint64) []Request {
		g, err := NewGenerator(s, seed)
		if err != nil {
			t.Fatal(err)
		}
		return drive(t, g, 2e9)
	}
	a, b := run(42), run(42)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed produced different request streams")
	}
	c := run(43)
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds produced identical request streams")
	}
	for i, r := range a {
		if r.ID != uint64(i) {
			t.Fatalf("request %d has ID %d: IDs must be sequential in creation order", i, r.ID)
		}
	}
}

func TestNextArrivalOrder(t *testing.T) {
	s := mustParse(t, `
clients:
  - arrival: {process: constant, rate: 2, num_requests: 4}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - arrival: {process: constant, rate: 4, num_requests: 6}
    prompt_tokens: {dist: constant, value: 2}
    output_tokens: {dist: constant, value: 1}
  - concurrency: 2
    num_requests: 5
    prompt_tokens: {dist: constant, value: 3}
    output_tokens: {dist: constant, value: 1}
`)
	g, err := NewGenerator(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		got = append(got, fmt.Sprintf("%d@%d", r.Client, r.ArrivalNS/1e6))
	}
	// Ties at equal times go to the lower client index; the closed-loop client's initial
	// two requests are at time 0.
	want := []string{"0@0", "1@0", "2@0", "2@0", "1@250", "0@500", "1@500", "1@750",
		"0@1000", "1@1000", "1@1250", "0@1500"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
}

func TestMergedPoissonOrderAndRate(t *testing.T) {
	s := mustParse(t, `
clients:
  - arrival: {rate: 30, duration: 1000s}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - arrival: {rate: 70, duration: 1000s}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`)
	g, err := NewGenerator(s, 9)
	if err != nil {
		t.Fatal(err)
	}
	if _, known := g.Totals(); known {
		t.Error("Totals: a duration-bounded workload has no known total")
	}
	var n [2]int
	last := int64(-1)
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		if r.ArrivalNS < last {
			t.Fatalf("arrival %d at %d after %d", r.ID, r.ArrivalNS, last)
		}
		if r.ArrivalNS >= 1000e9 {
			t.Fatalf("arrival after the client's duration: %d", r.ArrivalNS)
		}
		last = r.ArrivalNS
		n[r.Client]++
	}
	// 30000 and 70000 expected; Poisson counts have std sqrt(mean).
	if d := float64(n[0]) - 30000; d*d > 9*30000 {
		t.Errorf("client 0: %d arrivals, want about 30000", n[0])
	}
	if d := float64(n[1]) - 70000; d*d > 9*70000 {
		t.Errorf("client 1: %d arrivals, want about 70000", n[1])
	}
}

func TestClosedLoop(t *testing.T) {
	s := mustParse(t, `
clients:
  - concurrency: 4
    num_requests: 10
    think_time: 1s
    prompt_tokens: {dist: constant, value: 8}
    output_tokens: {dist: constant, value: 8}
`)
	g, err := NewGenerator(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, known := g.Totals(); !known || n != 10 {
		t.Errorf("Totals = %d, %v; want 10, true", n, known)
	}
	reqs := drive(t, g, 2e9)
	if len(reqs) != 10 {
		t.Fatalf("closed loop produced %d requests, want exactly num_requests = 10", len(reqs))
	}
	// Service 2 s + think 1 s: waves of 4 at t = 0, 3 s, then 2 at 6 s.
	wantTimes := []int64{0, 0, 0, 0, 3e9, 3e9, 3e9, 3e9, 6e9, 6e9}
	for i, r := range reqs {
		if r.ArrivalNS != wantTimes[i] {
			t.Errorf("request %d at %d ns, want %d", i, r.ArrivalNS, wantTimes[i])
		}
	}

	// Duration-bounded: sends while the send time is before 10 s.
	s = mustParse(t, `
clients:
  - concurrency: 3
    duration: 10s
    prompt_tokens: {dist: constant, value: 8}
    output_tokens: {dist: constant, value: 8}
`)
	g, _ = NewGenerator(s, 1)
	reqs = drive(t, g, 4e9) // waves at 0, 4, 8 s; 12 s is past the duration
	if len(reqs) != 9 {
		t.Errorf("duration closed loop produced %d requests, want 9", len(reqs))
	}
}

func TestSessions(t *testing.T) {
	s := mustParse(t, `
clients:
  - name: a
    arrival: {process: constant, rate: 1, num_requests: 20}
    prefix: {groups: 3, tokens: 100}
    session: {turns: {dist: constant, value: 4}, think_time: 5s}
    prompt_tokens: {dist: uniform, min: 10, max: 50}
    output_tokens: {dist: uniform, min: 1, max: 30}
  - name: b
    concurrency: 2
    num_requests: 3
    session: {turns: {dist: constant, value: 2}}
    prompt_tokens: {dist: constant, value: 7}
    output_tokens: {dist: constant, value: 3}
`)
	g, err := NewGenerator(s, 5)
	if err != nil {
		t.Fatal(err)
	}
	// a: 20 sessions of 4 turns; b: 3 requests in all (num_requests counts
	// every turn of a closed-loop client), sessions of 2 turns.
	if n, known := g.Totals(); !known || n != 20*4+3 {
		t.Errorf("Totals = %d, %v; want %d, true", n, known, 20*4+3)
	}
	const service = 2e9
	reqs := drive(t, g, service)
	if len(reqs) != 83 {
		t.Fatalf("got %d requests, want 83", len(reqs))
	}
	bySession := map[uint64][]Request{}
	for _, r := range reqs {
		if r.SessionID == 0 {
			t.Fatalf("request %d of a session client has no session", r.ID)
		}
		bySession[r.SessionID] = append(bySession[r.SessionID], r)
	}
	// b's two users each open a session; the third request is one's second turn.
	if len(bySession) != 22 {
		t.Errorf("%d sessions, want 22", len(bySession))
	}
	for id, turns := range bySession {
		for k, r := range turns {
			if r.Turn != k+1 {
				t.Fatalf("session %d: turn %d numbered %d", id, k+1, r.Turn)
			}
			prefix := 0
			if r.Client == 0 {
				prefix = 100
			}
			last := r.Segments[len(r.Segments)-1]
			if last.Tokens != r.PromptTokens-prefix {
				t.Errorf("session segment covers %d tokens, want prompt %d - prefix %d", last.Tokens, r.PromptTokens, prefix)
			}
			if k == 0 {
				continue
			}
			p := turns[k-1]
			newMsg := r.PromptTokens - p.PromptTokens - p.OutputTokens
			lo, hi := 10, 50
			if r.Client == 1 {
				lo, hi = 7, 7
			}
			if newMsg < lo || newMsg > hi {
				t.Errorf("turn %d prompt %d = prev prompt %d + prev output %d + %d: new message outside [%d,%d]",
					r.Turn, r.PromptTokens, p.PromptTokens, p.OutputTokens, newMsg, lo, hi)
			}
			think := int64(5e9)
			if r.Client == 1 {
				think = 0
			}
			if r.ArrivalNS != p.ArrivalNS+service+think {
				t.Errorf("turn %d sent at %d, want previous completion %d + think %d", r.Turn, r.ArrivalNS, p.ArrivalNS+service, think)
			}
			// Same content keys, so the whole previous prompt is a shared prefix.
			if len(r.Segments) != len(p.Segments) || r.Segments[0].Key != p.Segments[0].Key || last.Key != p.Segments[len(p.Segments)-1].Key {
				t.Errorf("turn %d segments %v do not extend %v", r.Turn, r.Segments, p.Segments)
			}
			if got := r.SharedPrefixTokens(&p); got != p.PromptTokens {
				t.Errorf("turn %d shares %d tokens with turn %d, want its whole prompt %d", r.Turn, got, p.Turn, p.PromptTokens)
			}
		}
	}
}

func TestPrefixKeys(t *testing.T) {
	y := `
clients:
  - name: a
    arrival: {rate: 50, num_requests: 2000}
    prefix: {groups: 4, tokens: 64}
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 1}
  - name: b
    arrival: {rate: 50, num_requests: 2000}
    prefix: {groups: 4, tokens: 64}
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 1}
`
	keys := func(seed uint64) [2]map[uint64]int {
		g, err := NewGenerator(mustParse(t, y), seed)
		if err != nil {
			t.Fatal(err)
		}
		ks := [2]map[uint64]int{{}, {}}
		for {
			r, ok := g.NextArrival()
			if !ok {
				break
			}
			if r.PromptTokens != 74 || len(r.Segments) != 1 || r.Segments[0].Tokens != 64 {
				t.Fatalf("request %+v: want prompt 64+10 with one 64-token prefix segment", r)
			}
			ks[r.Client][r.Segments[0].Key]++
		}
		return ks
	}
	ks := keys(1)
	for c, m := range ks {
		if len(m) != 4 {
			t.Errorf("client %d used %d prefix keys, want 4 groups", c, len(m))
		}
		for k, n := range m {
			if _, dup := ks[1-c][k]; dup {
				t.Errorf("prefix key %x shared between clients", k)
			}
			// Uniform group choice: 500 each, binomial std ~19.
			if n < 400 || n > 600 {
				t.Errorf("client %d group key %x used %d times, want about 500", c, k, n)
			}
		}
	}
	if reflect.DeepEqual(keys(2), ks) {
		t.Error("keys do not depend on the seed")
	}
}

func TestContentKeyInjective(t *testing.T) {
	for _, seed := range []uint64{0, 1} {
		seen := map[uint64]string{}
		for _, client := range []int{0, 1, 2, 3, 49, traceClient} {
			for kind := uint64(1); kind <= 2; kind++ {
				for idx := range uint64(200) {
					k := contentKey(seed, client, kind, idx)
					id := fmt.Sprint(client, "/", kind, "/", idx)
					if prev, dup := seen[k]; dup {
						t.Fatalf("key collision: %s and %s", prev, id)
					}
					seen[k] = id
				}
			}
		}
	}
}

func TestGlobalDurationCutoff(t *testing.T) {
	s := mustParse(t, `
duration: 10s
clients:
  - arrival: {process: constant, rate: 1, num_requests: 100}
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
  - concurrency: 1
    num_requests: 100
    prompt_tokens: {dist: constant, value: 1}
    output_tokens: {dist: constant, value: 1}
`)
	g, err := NewGenerator(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, known := g.Totals(); known {
		t.Error("Totals must be unknown under a global cut-off")
	}
	reqs := drive(t, g, 3e9)
	var n [2]int
	for _, r := range reqs {
		if r.ArrivalNS >= 10e9 {
			t.Fatalf("request at %d ns past the 10 s cut-off", r.ArrivalNS)
		}
		n[r.Client]++
	}
	// Open loop: t = 0..9 s. Closed loop: 0, 3, 6, 9 s.
	if n != [2]int{10, 4} {
		t.Errorf("counts %v, want [10 4]", n)
	}
}

func TestNewGeneratorDoesNotModifySpec(t *testing.T) {
	s := &Spec{Clients: []Client{{
		Arrival:      &Arrival{Rate: 1, NumRequests: 3},
		PromptTokens: LengthDist{Dist: DistConstant, Value: 1},
		OutputTokens: LengthDist{Dist: DistConstant, Value: 1},
	}}}
	if _, err := NewGenerator(s, 1); err != nil {
		t.Fatal(err)
	}
	if s.Clients[0].Name != "" || s.Clients[0].Arrival.Process != "" {
		t.Error("NewGenerator applied defaults to the caller's spec")
	}
	s.Clients[0].Arrival.Rate = -1
	if _, err := NewGenerator(s, 1); err == nil {
		t.Error("NewGenerator accepted an invalid spec")
	}
}

func TestNextArrivalAllocs(t *testing.T) {
	s := mustParse(t, `
clients:
  - arrival: {rate: 1000, num_requests: 100000}
    prefix: {groups: 4, tokens: 10}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256}
    output_tokens: {dist: exponential, mean: 100}
  - arrival: {process: constant, rate: 100, num_requests: 100000}
    prompt_tokens: {dist: uniform, min: 1, max: 100}
    output_tokens: {dist: normal, mean: 100, std: 10}
`)
	g, err := NewGenerator(s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(1000, func() { g.NextArrival() }); a != 0 {
		t.Errorf("NextArrival allocates %v times per call, want 0", a)
	}
}

func BenchmarkNextArrival(b *testing.B) {
	s := mustParse(b, `
clients:
  - arrival: {rate: 100, num_requests: 1000000}
    prompt_tokens: {dist: lognormal, mean: 512, std: 256}
    output_tokens: {dist: lognormal, mean: 256, std: 128}
`)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		g, err := NewGenerator(s, 1)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, ok := g.NextArrival(); !ok {
				break
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
}

// A closed-loop ramp-up staggers the first requests evenly: client i of 4
// over 8 s starts at 2i s; follow-ups keep the closed loop.
func TestClosedLoopRampUp(t *testing.T) {
	sp, err := Parse([]byte(`
clients:
  - name: c
    concurrency: 4
    num_requests: 8
    ramp_up: 8s
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 10}
`), "ramp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(sp, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		got = append(got, r.ArrivalNS)
	}
	want := []int64{0, 2e9, 4e9, 6e9}
	if len(got) != len(want) {
		t.Fatalf("initial arrivals %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("initial arrivals %v, want %v", got, want)
		}
	}
	if _, err := Parse([]byte("clients:\n  - name: c\n    concurrency: 2\n    num_requests: 2\n    ramp_up: -1s\n    prompt_tokens: {dist: constant, value: 1}\n    output_tokens: {dist: constant, value: 1}\n"), "bad.yaml"); err == nil {
		t.Fatal("negative ramp_up accepted")
	}
}

// ramp_up_random draws the first requests' starts uniformly over the ramp,
// sorted and reproducible from the seed.
func TestClosedLoopRampUpRandom(t *testing.T) {
	y := []byte(`
clients:
  - name: c
    concurrency: 50
    num_requests: 100
    ramp_up: 10s
    ramp_up_random: true
    prompt_tokens: {dist: constant, value: 10}
    output_tokens: {dist: constant, value: 10}
`)
	starts := func(seed uint64) []int64 {
		sp, err := Parse(y, "r.yaml")
		if err != nil {
			t.Fatal(err)
		}
		g, err := NewGenerator(sp, seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for {
			r, ok := g.NextArrival()
			if !ok {
				return out
			}
			out = append(out, r.ArrivalNS)
		}
	}
	a, b, c := starts(1), starts(1), starts(2)
	if len(a) != 50 {
		t.Fatalf("%d initial requests, want 50", len(a))
	}
	for i := range a {
		if a[i] < 0 || a[i] >= 10e9 || (i > 0 && a[i] < a[i-1]) || a[i] != b[i] {
			t.Fatalf("starts %v (again %v)", a, b)
		}
	}
	if slices.Equal(a, c) {
		t.Fatal("a different seed gave the same starts")
	}
	evenly := 0
	for i := range a {
		if a[i] == int64(i)*10e9/50 {
			evenly++
		}
	}
	if evenly > 5 {
		t.Fatalf("random ramp looks even: %d of 50 starts on the even grid", evenly)
	}
}

// TestMaxRequestsCap: a cap at the exact count lets every request through and is not
// reported; a lower cap stops generation there and is.
func TestMaxRequestsCap(t *testing.T) {
	sp := &Spec{Clients: []Client{{Name: "a", Concurrency: 2, NumRequests: 10,
		PromptTokens: LengthDist{Dist: DistConstant, Value: 5}, OutputTokens: LengthDist{Dist: DistConstant, Value: 5}}}}
	for _, tc := range []struct{ cap, want int }{{0, 10}, {10, 10}, {100, 10}, {4, 4}} {
		g, err := NewGenerator(sp, 1)
		if err != nil {
			t.Fatal(err)
		}
		g.SetMaxRequests(tc.cap)
		var pending []Request
		n := 0
		for {
			r, ok := g.NextArrival()
			if !ok {
				break
			}
			pending = append(pending, r)
		}
		for len(pending) > 0 {
			r := pending[0]
			pending = pending[1:]
			n++
			if f, ok := g.OnComplete(r, r.ArrivalNS+1); ok {
				pending = append(pending, f)
			}
		}
		if n != tc.want || g.Exceeded() != (tc.want < 10) {
			t.Errorf("cap %d: %d requests, exceeded %v; want %d, %v", tc.cap, n, g.Exceeded(), tc.want, tc.want < 10)
		}
	}
}

// TestEstimateRequests: counts, windows, stages, the global cut-off and session turns.
func TestEstimateRequests(t *testing.T) {
	c := func(a *Arrival) Client {
		return Client{Arrival: a, PromptTokens: LengthDist{Dist: DistConstant, Value: 1}, OutputTokens: LengthDist{Dist: DistConstant, Value: 1}}
	}
	sp := &Spec{Clients: []Client{
		c(&Arrival{Rate: 10, NumRequests: 100}),
		c(&Arrival{Rate: 10, Duration: Duration(20e9)}),
		c(&Arrival{Stages: []Stage{{Rate: 1, Duration: Duration(10e9)}, {Rate: 100, Duration: Duration(10e9)}}}),
	}}
	if got := sp.EstimateRequests(); got != 100+200+1010 {
		t.Errorf("estimate %g, want 1310", got)
	}
	sp.Duration = Duration(5e9) // cut-off at 5 s
	if got := sp.EstimateRequests(); got != 50+50+5 {
		t.Errorf("cut estimate %g, want 105", got)
	}
	sp = &Spec{Clients: []Client{c(&Arrival{Rate: 1, NumRequests: 7})}}
	sp.Clients[0].Session = &Session{Turns: LengthDist{Dist: DistUniform, Min: 2, Max: 4}}
	if got := sp.EstimateRequests(); got != 21 {
		t.Errorf("session estimate %g, want 21", got)
	}
}
