package workload

import "github.com/roofsim/roofsim/internal/mix"

// Content keys and random streams are both derived from the run seed with bijective
// 64-bit mixers, so that keys of different (client, kind, index) triples never collide
// within one run and streams of different subsystems are independent.

// Kinds of content a Segment key can name.
const (
	keyKindPrefix  = 1
	keyKindSession = 2
)

// traceClient is the client field used for keys of replayed traces, whose prefix and
// session identifiers are global to the trace rather than per client.
const traceClient = 1<<16 - 1

// maxClients bounds the number of clients so that the client index fits the 16 bits of
// the key encoding (the last value is reserved for traces).
const maxClients = traceClient

// contentKey returns the Segment key for (client, kind, index). The triple is packed
// injectively into 64 bits (2 bits kind, 16 bits client, 46 bits index), xored with a
// seed-derived constant and mixed; both steps are bijections, so distinct triples give
// distinct keys for a given seed.
func contentKey(seed uint64, client int, kind uint64, index uint64) uint64 {
	packed := kind<<62 | uint64(client&0xffff)<<46 | index&(1<<46-1)
	return mix.SplitMix64(packed ^ mix.SplitMix64(seed^0x9e3779b97f4a7c15))
}

// Stream identifiers: one per subsystem and client.
const (
	streamArrival uint64 = iota + 1
	streamPrompt
	streamOutput
	streamPrefix
	streamTurns
	streamRamp
)

// streamSeeds returns the two PCG seeds of the stream for (seed, client, subsystem).
func streamSeeds(seed uint64, client int, subsystem uint64) (uint64, uint64) {
	a := mix.SplitMix64(seed + 0x9e3779b97f4a7c15*subsystem)
	b := mix.SplitMix64(uint64(client)<<8 ^ subsystem ^ mix.SplitMix64(seed))
	return a, b
}
