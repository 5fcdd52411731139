package hardware

// MemoryIndex names the quantity an efficiency's memory curve is read at.
type MemoryIndex string

const (
	// MemoryByBytes reads the memory curve at the operator's bytes (the
	// default, "").
	MemoryByBytes MemoryIndex = ""
	// MemoryByPairBytes reads it at the operator's bytes per (request, KV
	// head) pair. A paged decode-attention kernel runs one thread block per
	// pair (FlashAttention: per request and KV head, the GQA group's query
	// heads packed into its rows), and each block streams its own KV pages
	// in a loop whose prologue (page-table reads, the first loads' latency)
	// and epilogue (softmax rescale, the output write) are paid once per
	// stream. How close the kernel gets to the DRAM bandwidth therefore
	// depends on how long each stream is, not on the total bytes: a batch
	// of many short streams and one of a few long ones move the same bytes
	// at very different rates. The per-pair fixed GPU time is
	// OpEfficiency.PerSeqHeadUS; this index sets how the streaming rate
	// itself ramps with the stream's length.
	MemoryByPairBytes MemoryIndex = "pair_bytes"
)

// Known reports whether m is a memory index this package defines.
func (m MemoryIndex) Known() bool { return m == MemoryByBytes || m == MemoryByPairBytes }

// MemoryIndexOf is the value (bytes) at which the memory curve is read for
// an operator moving bytes bytes over pairs (request, KV head) pairs:
// bytes under MemoryByBytes, bytes/pairs under MemoryByPairBytes. An
// operator without pairs (pairs <= 0) is read as one stream, at bytes.
// O(1).
func (o *OpEfficiency) MemoryIndexOf(bytes float64, pairs int) float64 {
	if o.MemoryIndex != MemoryByPairBytes || pairs <= 0 {
		return bytes
	}
	return bytes / float64(pairs)
}

// MemoryAt is the memory efficiency of an operator moving bytes bytes over
// pairs (request, KV head) pairs: Memory.At(MemoryIndexOf(bytes, pairs)),
// in (0, Memory.Max].
func (o *OpEfficiency) MemoryAt(bytes float64, pairs int) float64 {
	return o.Memory.At(o.MemoryIndexOf(bytes, pairs))
}
