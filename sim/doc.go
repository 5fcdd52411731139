// Package sim is roofsim's discrete-event engine: a virtual nanosecond clock,
// a totally ordered event queue, one or more serving instances (a scheduler
// plus a step model each) behind a router, and the collection of per-request
// records.
//
// The engine is a single-goroutine state machine: Run pulls arrivals from a
// Source, routes them to instances, and advances each instance one forward
// pass at a time, asking its StepModel how long the pass takes. It never
// reads the wall clock, starts goroutines or touches files; records go to a
// Sink supplied by the caller. Same inputs and seed give identical outputs.
//
// Reading order: time.go (Time and the event queue), engine.go (Run and the
// event loop), instance.go (one server), router.go (replica choice),
// capacity.go (KV-cache sizing the way vLLM does it).
package sim
