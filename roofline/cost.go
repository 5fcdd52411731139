package roofline

// OpKind is the operator family of a Cost; it selects the efficiency curve
// of a GPU profile.
type OpKind string

// Operator families.
const (
	KindGEMM             OpKind = "gemm"
	KindGEMV             OpKind = "gemv"
	KindAttentionPrefill OpKind = "attention_prefill"
	KindAttentionDecode  OpKind = "attention_decode"
	KindElementwise      OpKind = "elementwise"
	KindMoE              OpKind = "moe"
	KindAllReduce        OpKind = "allreduce"
)

// Cost is the work of one operator: floating-point operations and the bytes
// it moves, split by what the bytes are. All byte counts are DRAM traffic,
// except for KindAllReduce where ActBytes is interconnect (bus) traffic per
// GPU.
type Cost struct {
	Name string `json:"name"`
	Kind OpKind `json:"kind"`
	// FLOPs counts floating-point operations (a multiply-add is 2).
	FLOPs float64 `json:"flops"`
	// WeightBytes is the parameter bytes read.
	WeightBytes float64 `json:"weight_bytes"`
	// ActBytes is activation bytes read plus written.
	ActBytes float64 `json:"act_bytes"`
	// KVBytes is KV-cache bytes read plus written.
	KVBytes float64 `json:"kv_bytes"`
	// ComputePrecision is the GPU peak key the FLOPs run at ("bf16", "fp8").
	ComputePrecision string `json:"compute_precision"`
	// M and N are the output shape of a GEMM or GEMV (rows = tokens,
	// columns = output features) and K its reduction depth; 0 for operators
	// without one. A tiled efficiency (hardware.OpEfficiency.ComputeAt)
	// reads them.
	M int `json:"-"`
	N int `json:"-"`
	K int `json:"-"`
	// Pairs is the number of (request, KV head) pairs a batched attention
	// kernel serves, one thread block (before any KV split) and one KV
	// stream each; 0 for operators without that structure. An efficiency
	// whose memory curve is indexed by bytes per pair
	// (hardware.OpEfficiency.MemoryAt) reads it.
	Pairs int `json:"-"`
}

// Bytes is WeightBytes + ActBytes + KVBytes.
func (c Cost) Bytes() float64 { return c.WeightBytes + c.ActBytes + c.KVBytes }

// Intensity is the arithmetic intensity FLOPs / Bytes in FLOP/byte. It is 0
// when the cost moves no bytes (the ratio is undefined; see Analyze).
func (c Cost) Intensity() float64 {
	b := c.Bytes()
	if b <= 0 {
		return 0
	}
	return c.FLOPs / b
}

// computeKey is ComputePrecision without a GPU to check against.
func computeKey(w, act Precision) string { return ComputePrecision(w, act, nil) }
