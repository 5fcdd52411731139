package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/roofsim/roofsim/internal/heapq"
	"github.com/roofsim/roofsim/internal/limits"
)

// Generator produces the request stream of a workload deterministically from a seed.
//
// The engine drives it with two calls: NextArrival yields, in nondecreasing ArrivalNS,
// every request whose arrival time is known in advance (open-loop arrivals, the first
// Concurrency requests of closed-loop clients at time 0, first turns of sessions), and
// OnComplete yields the follow-up of a finished or rejected request (closed-loop
// successor, next session turn, or an arrival of a client with max_concurrency that
// waited for the slot the request freed). A Generator is not safe for concurrent use.
//
// Memory is O(clients + active sessions); nothing is pre-generated.
type Generator struct {
	seed        uint64
	clients     []clientGen
	heap        heapq.Heap[struct{}] // clients with a pending arrival, keyed (nextNS, index)
	nextID      uint64
	nextSession uint64
	sessions    map[uint64]sessionState
	cutoffNS    int64 // global cut-off (exclusive); math.MaxInt64 when none
	total       int
	totalKnown  bool
	maxRequests uint64 // 0 = no cap (SetMaxRequests)
	exceeded    bool

	trace    *Trace
	tracePos int
}

// clientGen is the generation state of one client.
type clientGen struct {
	spec  *Client
	index int

	prompt, output, turns sampler
	promptRng             *rand.Rand
	outputRng             *rand.Rand
	prefixRng             *rand.Rand
	turnsRng              *rand.Rand
	prefixSegs            [][]Segment // per prefix group, shared read-only by requests
	prefixTokens          int

	// open loop
	arrivals arrivalProcess
	maxConc  int  // Arrival.MaxConcurrency; 0 = no cap
	inFlight int  // requests sent and not yet completed (counted when maxConc > 0)
	blocked  bool // the cap was reached: arrivals now leave through OnComplete
	// closed loop
	initialLeft int          // requests still to send at time 0 (or over the ramp-up)
	initialSent int          // initial requests sent so far
	rampAt      []int64      // random ramp-up start times, sorted (RampUpRandom)
	budget      closedBudget // num_requests, drawn from by initial requests and follow-ups
	endNS       int64        // closed-loop Duration, exclusive; math.MaxInt64 when none

	nextNS int64 // next known arrival, valid while the client is in the heap
}

// sessionState tracks a session whose later turns are still to be sent.
type sessionState struct {
	turnsLeft int // turns after the last one sent
	group     int // prefix group, -1 when none
	turn      int // number of the last turn sent
}

// NewGenerator prepares a generator for spec with the given seed (typically spec.Seed).
// spec is not modified: defaults are applied to a copy, which is validated, and its
// empirical tables and trace are loaded. A spec with Trace set replays it.
func NewGenerator(spec *Spec, seed uint64) (*Generator, error) {
	s := spec.clone()
	s.ApplyDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.loadTables(); err != nil {
		return nil, err
	}
	cutoff := int64(math.MaxInt64)
	if s.Duration > 0 {
		cutoff = s.Duration.NS()
	}
	if s.Trace != "" {
		tr, err := LoadTrace(s.TracePath())
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		g := NewTraceGenerator(tr, seed)
		g.cutoffNS = cutoff
		if cutoff != math.MaxInt64 {
			g.total, g.totalKnown = 0, true
			for _, r := range tr.Rows {
				if r.ArrivalNS < cutoff {
					g.total++
				}
			}
		}
		return g, nil
	}
	g := &Generator{
		seed:        seed,
		clients:     make([]clientGen, len(s.Clients)),
		nextSession: 1,
		sessions:    make(map[uint64]sessionState),
		cutoffNS:    cutoff,
		totalKnown:  s.Duration == 0,
	}
	for i := range s.Clients {
		c := &s.Clients[i]
		cg := &g.clients[i]
		cg.spec = c
		cg.index = i
		cg.prompt = newSampler(&c.PromptTokens, limits.MaxTokens)
		cg.output = newSampler(&c.OutputTokens, limits.MaxTokens)
		cg.promptRng = rand.New(rand.NewPCG(streamSeeds(seed, i, streamPrompt)))
		cg.outputRng = rand.New(rand.NewPCG(streamSeeds(seed, i, streamOutput)))
		cg.prefixRng = rand.New(rand.NewPCG(streamSeeds(seed, i, streamPrefix)))
		cg.turnsRng = rand.New(rand.NewPCG(streamSeeds(seed, i, streamTurns)))
		if c.Session != nil {
			cg.turns = newSampler(&c.Session.Turns, limits.MaxTurns)
		}
		if c.Prefix != nil {
			cg.prefixTokens = c.Prefix.Tokens
			cg.prefixSegs = make([][]Segment, c.Prefix.Groups)
			for grp := range cg.prefixSegs {
				key := contentKey(seed, i, keyKindPrefix, uint64(grp))
				cg.prefixSegs[grp] = []Segment{{Key: key, Tokens: c.Prefix.Tokens}}
			}
		}
		turnsPer, turnsKnown := 1, true
		if c.Session != nil {
			turnsKnown = c.Session.Turns.Dist == DistConstant
			turnsPer = c.Session.Turns.Value
		}
		if c.Arrival != nil {
			arr, err := newArrivalProcess(c.Arrival, rand.NewPCG(streamSeeds(seed, i, streamArrival)))
			if err != nil {
				return nil, fmt.Errorf("clients[%d].arrival: %w", i, err)
			}
			cg.arrivals = arr
			cg.maxConc = c.Arrival.MaxConcurrency
			if c.Arrival.NumRequests > 0 && turnsKnown {
				g.total += c.Arrival.NumRequests * turnsPer
			} else {
				g.totalKnown = false
			}
		} else {
			cg.budget, cg.endNS = newClosedBudget(c), math.MaxInt64
			cg.initialLeft = cg.budget.take(c.Concurrency)
			if c.NumRequests > 0 {
				// Every request, a session's later turns included, draws from
				// num_requests: exactly that many are sent.
				g.total += c.NumRequests
			} else {
				cg.endNS = c.Duration.NS()
				g.totalKnown = false
			}
			if ramp := c.RampUp.NS(); ramp > 0 && c.RampUpRandom {
				rng := rand.New(rand.NewPCG(streamSeeds(seed, i, streamRamp)))
				cg.rampAt = make([]int64, cg.initialLeft)
				for j := range cg.rampAt {
					cg.rampAt[j] = rng.Int64N(ramp)
				}
				slices.Sort(cg.rampAt)
			}
		}
		if g.advance(cg) {
			g.heap.Push(clientKey(cg), struct{}{})
		}
	}
	return g, nil
}

// Totals returns the number of requests the generator will produce, when it is known in
// advance (every client bounded by a request count, constant session turns, no global
// cut-off; or a trace).
func (g *Generator) Totals() (requests int, known bool) {
	if !g.totalKnown {
		return 0, false
	}
	return g.total, true
}

// SetMaxRequests caps the requests the generator produces at n (0: no cap). Once n
// requests exist, NextArrival and OnComplete return none and Exceeded reports true:
// a random workload (a bursty gamma process, a duration-bounded closed loop) that
// turns out far larger than expected stops instead of running for hours.
func (g *Generator) SetMaxRequests(n int) {
	g.maxRequests = uint64(max(n, 0))
}

// Exceeded reports whether the generator withheld a request because of the cap set by
// SetMaxRequests.
func (g *Generator) Exceeded() bool { return g.exceeded }

// capped withholds r, when ok, if it is past the cap (request IDs count from 0).
func (g *Generator) capped(r Request, ok bool) (Request, bool) {
	if ok && g.maxRequests > 0 && r.ID >= g.maxRequests {
		g.exceeded = true
		return Request{}, false
	}
	return r, ok
}

// advance computes the client's next known arrival into cg.nextNS; false when none.
func (g *Generator) advance(cg *clientGen) bool {
	if cg.spec.Arrival != nil {
		t, ok := cg.arrivals.next()
		if !ok {
			return false
		}
		cg.nextNS = int64(math.Round(t))
	} else {
		if cg.initialLeft == 0 {
			return false
		}
		cg.initialLeft--
		// The i-th initial request (i = 0, 1, ...) starts at i*RampUp/Concurrency.
		i := int64(cg.initialSent)
		cg.initialSent++
		cg.nextNS = 0
		if cg.rampAt != nil {
			cg.nextNS = cg.rampAt[i]
		} else if ramp := cg.spec.RampUp.NS(); ramp > 0 {
			cg.nextNS = int64(math.Round(float64(i) * float64(ramp) / float64(cg.spec.Concurrency)))
		}
		if cg.nextNS >= cg.endNS {
			// A user whose ramp-up start falls past the client's duration never starts;
			// the starts are nondecreasing, so neither do the users after it.
			cg.initialLeft = 0
			return false
		}
	}
	if cg.nextNS >= g.cutoffNS {
		return false
	}
	return true
}

// NextArrival returns the next request whose arrival time is known in advance, in
// nondecreasing ArrivalNS with ties broken by client index then creation order; false
// when there are none left (follow-ups may still come from OnComplete). Cost
// O(log clients); it does not allocate for poisson or constant clients without sessions
// (gamma draws allocate inside gonum).
func (g *Generator) NextArrival() (Request, bool) {
	return g.capped(g.nextArrival())
}

func (g *Generator) nextArrival() (Request, bool) {
	if g.trace != nil {
		return g.nextTraceArrival()
	}
	for g.heap.Len() > 0 {
		k, _ := g.heap.Peek()
		cg := &g.clients[k.Minor]
		if cg.maxConc > 0 && cg.inFlight >= cg.maxConc {
			// Whether a slot frees before cg.nextNS depends on completions not yet
			// known: from now on each completion releases the next arrival.
			g.heap.Pop()
			cg.blocked = true
			continue
		}
		r := g.newRequest(cg, cg.nextNS)
		cg.inFlight++
		if g.advance(cg) {
			g.heap.ReplaceTop(clientKey(cg), struct{}{})
		} else {
			g.heap.Pop()
		}
		return r, true
	}
	return Request{}, false
}

// releaseWaiting returns the first arrival waiting for a slot of the capped open-loop
// client cg, whose request finished at finishNS and freed one: the arrival is sent at
// its own time or at finishNS, whichever is later (a FIFO semaphore). The client stays
// completion-driven while arrivals remain: it holds MaxConcurrency requests counting
// the one released, so the next arrival needs the next completion. Cost O(1).
func (g *Generator) releaseWaiting(cg *clientGen, finishNS int64) (Request, bool) {
	cg.inFlight--
	if !cg.blocked {
		return Request{}, false
	}
	t := max(cg.nextNS, finishNS)
	if t >= g.cutoffNS {
		cg.blocked = false
		return Request{}, false
	}
	r := g.newRequest(cg, t)
	cg.inFlight++
	cg.blocked = g.advance(cg)
	return r, true
}

// OnComplete is called once when r completes or is rejected, at finishNS. It returns the
// request this completion triggers, if any: the next turn of r's session (sent
// session.think_time after finishNS), or for a closed-loop client whose session (or
// single request) is over, its next request (sent think_time after finishNS) while the
// client's num_requests or duration allows. Nothing is generated at or after the global
// cut-off. Sessions continue after a rejected turn.
//
// With zero think time and an engine that rejects instantly, a duration-bounded closed
// loop would loop at one instant; engines should not reject all requests at time t with
// no progress.
func (g *Generator) OnComplete(r Request, finishNS int64) (Request, bool) {
	return g.capped(g.onComplete(r, finishNS))
}

func (g *Generator) onComplete(r Request, finishNS int64) (Request, bool) {
	if g.trace != nil || r.Client < 0 || r.Client >= len(g.clients) {
		return Request{}, false
	}
	cg := &g.clients[r.Client]
	if r.SessionID != 0 {
		if st, ok := g.sessions[r.SessionID]; ok {
			t := sat(finishNS, cg.spec.Session.ThinkTime.NS())
			// A closed-loop client's later turns draw from its num_requests
			// like its new requests: with the budget spent the session ends.
			if t < g.cutoffNS && st.turnsLeft > 0 && (cg.spec.Arrival != nil || t < cg.endNS && cg.budget.take(1) == 1) {
				st.turnsLeft--
				st.turn++
				if st.turnsLeft == 0 {
					delete(g.sessions, r.SessionID)
				} else {
					g.sessions[r.SessionID] = st
				}
				return g.nextTurn(cg, r, st, t), true
			}
			delete(g.sessions, r.SessionID) // cut off: the session ends here
		}
	}
	if cg.spec.Arrival != nil {
		if cg.maxConc > 0 {
			return g.releaseWaiting(cg, finishNS)
		}
		return Request{}, false
	}
	t := sat(finishNS, cg.spec.ThinkTime.NS())
	if t >= g.cutoffNS || t >= cg.endNS || cg.budget.take(1) == 0 {
		return Request{}, false
	}
	return g.newRequest(cg, t), true
}

// sat returns a+b saturated at math.MaxInt64 (a, b >= 0).
func sat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// newRequest creates a fresh request (or the first turn of a new session) of cg at t.
func (g *Generator) newRequest(cg *clientGen, t int64) Request {
	group := -1
	if cg.prefixSegs != nil {
		group = cg.prefixRng.IntN(len(cg.prefixSegs))
	}
	drawn := cg.prompt.sample(cg.promptRng)
	r := Request{
		ID:           g.nextID,
		Client:       cg.index,
		ArrivalNS:    t,
		PromptTokens: cg.prefixTokens + drawn,
		OutputTokens: cg.output.sample(cg.outputRng),
		Priority:     cg.spec.Priority,
	}
	g.nextID++
	if cg.spec.Session == nil {
		if group >= 0 {
			r.Segments = cg.prefixSegs[group]
		}
		return r
	}
	turns := cg.turns.sample(cg.turnsRng)
	r.SessionID = g.nextSession
	g.nextSession++
	r.Turn = 1
	st := sessionState{turnsLeft: turns - 1, group: group, turn: 1}
	if st.turnsLeft > 0 {
		g.sessions[r.SessionID] = st
	}
	r.Segments = g.sessionSegments(cg, r.SessionID, group, drawn)
	return r
}

// nextTurn creates turn st.turn of prev's session at t: its prompt is prev's prompt +
// prev's output + a new user message.
func (g *Generator) nextTurn(cg *clientGen, prev Request, st sessionState, t int64) Request {
	msg := cg.prompt.sample(cg.promptRng)
	r := Request{
		ID:           g.nextID,
		Client:       cg.index,
		ArrivalNS:    t,
		PromptTokens: prev.PromptTokens + prev.OutputTokens + msg,
		OutputTokens: cg.output.sample(cg.outputRng),
		Priority:     cg.spec.Priority,
		SessionID:    prev.SessionID,
		Turn:         st.turn,
	}
	g.nextID++
	r.Segments = g.sessionSegments(cg, r.SessionID, st.group, r.PromptTokens-cg.prefixTokens)
	return r
}

// sessionSegments returns [prefix segment] + the session segment of n tokens.
func (g *Generator) sessionSegments(cg *clientGen, session uint64, group, n int) []Segment {
	segs := make([]Segment, 0, 2)
	if group >= 0 {
		segs = append(segs, cg.prefixSegs[group][0])
	}
	return append(segs, Segment{Key: contentKey(g.seed, cg.index, keyKindSession, session), Tokens: n})
}

// clientKey orders clients with a pending arrival by (nextNS, index).
func clientKey(cg *clientGen) heapq.Key {
	return heapq.Key{Major: cg.nextNS, Minor: uint64(cg.index)}
}
