package roofline

import (
	"testing"
	"testing/quick"
)

func TestGEMVReference(t *testing.T) {
	fp16, fp8 := mustPrec(t, "fp16"), mustPrec(t, "fp8")
	// A 287 GB/s, 62 TFLOPS part (fp16).
	const peak, bw = 62e12, 287e9
	c := GEMV(4096, 4096, fp16, fp16)
	// FLOPs 2*4096*4096; bytes 4096*4096*2 (W) + (4096+4096)*2 (x, y).
	if c.FLOPs != 33554432 {
		t.Errorf("FLOPs = %v, want 33554432", c.FLOPs)
	}
	if c.Bytes() != 33570816 {
		t.Errorf("Bytes = %v, want 33570816", c.Bytes())
	}
	if !near(c.Intensity(), 33554432.0/33570816, 1e-15) || !near(c.Intensity(), 1, 1e-3) {
		t.Errorf("Intensity = %v, want ~1", c.Intensity())
	}
	a := Analyze(c, peak, bw)
	if a.Bound != MemoryBound || !near(a.TimeS, 33570816/287e9, 1e-12) || !near(a.TimeS, 117e-6, 0.01) {
		t.Errorf("fp16 GEMV: %s %.3g s, want memory-bound ~117 us", a.Bound, a.TimeS)
	}
	c8 := GEMV(4096, 4096, fp8, fp16)
	// Weights at 1 byte: 16,777,216 + 16,384 = 16,793,600 bytes.
	if c8.Bytes() != 16793600 {
		t.Errorf("fp8 GEMV bytes = %v, want 16793600", c8.Bytes())
	}
	if a8 := Analyze(c8, peak, bw); !near(a8.TimeS, 58.5e-6, 0.01) {
		t.Errorf("fp8 GEMV time = %.4g s, want ~58.5 us", a8.TimeS)
	}
	if c8.ComputePrecision != "fp16" {
		t.Errorf("fp8 weights with fp16 act compute at %q, want fp16", c8.ComputePrecision)
	}
}

func TestGEMM(t *testing.T) {
	bf16, q4 := mustPrec(t, "bf16"), mustPrec(t, "q4_k")
	tests := []struct {
		name       string
		m, n, k    int
		w          Precision
		flops, wB  float64
		actB       float64
		computeKey string
	}{
		// 2*16*4096*4096; W 4096*4096*2; A 16*4096*2 + C 16*4096*2.
		{"bf16 decode batch", 16, 4096, 4096, bf16, 536870912, 33554432, 262144, "bf16"},
		// q4_k weights: 4.5 bits -> 4096*14336*4.5/8 = 33,030,144 B.
		{"q4_k", 1, 14336, 4096, q4, 2 * 14336 * 4096, 33030144, (4096 + 14336) * 2, "bf16"},
	}
	for _, tt := range tests {
		c := GEMM(tt.m, tt.n, tt.k, tt.w, bf16)
		if c.FLOPs != tt.flops || c.WeightBytes != tt.wB || c.ActBytes != tt.actB || c.ComputePrecision != tt.computeKey || c.Kind != KindGEMM {
			t.Errorf("%s: got %+v", tt.name, c)
		}
	}
}

func TestAttentionPrefillHand(t *testing.T) {
	bf16 := mustPrec(t, "bf16")
	tests := []struct {
		name   string
		window int
		keys   float64 // per sequence
		read   float64 // K/V token positions read per sequence
	}{
		// cached 5, qLen 3: new tokens attend to 6, 7, 8 keys.
		{"full", 0, 6 + 7 + 8, 8},
		{"window 6", 6, 6 + 6 + 6, 8},
		// window 4: tokens at positions 5,6,7 see 2..5, 3..6, 4..7: 6 positions.
		{"window 4", 4, 4 + 4 + 4, 6},
		{"window 100", 100, 21, 8},
	}
	for _, tt := range tests {
		// batch 2, heads 4, kvHeads 2, headDim 8.
		c := AttentionPrefill(2, 4, 2, 8, 3, 5, bf16, bf16, tt.window)
		wantF := 2 * 4 * 4 * 8 * tt.keys            // batch * 4 * heads * headDim * keys
		wantA := 2 * 2 * 3 * 4 * 8 * 2.0            // batch * (Q,O) * qLen * heads*headDim * 2 B
		wantKV := 2 * 2 * 2 * 8 * 2 * (tt.read + 3) // batch * (K,V) * kvHeads*headDim * 2 B * (read + written)
		if c.FLOPs != wantF || c.ActBytes != wantA || c.KVBytes != wantKV {
			t.Errorf("%s: FLOPs %v KV %v Act %v, want %v %v %v", tt.name, c.FLOPs, c.KVBytes, c.ActBytes, wantF, wantKV, wantA)
		}
	}
}

// The closed form of prefillKeySum / prefillKVRead against a loop over the
// definition.
func TestPrefillSumsMatchDefinition(t *testing.T) {
	f := func(q, c, w uint16) bool {
		qLen, cached, window := int(q%600), int(c%900), int(w%700)
		var keys float64
		lo, hi := cached+qLen, -1 // positions read
		for i := 0; i < qLen; i++ {
			pos := cached + i
			n := pos + 1
			first := 0
			if window > 0 && n > window {
				n = window
				first = pos - window + 1
			}
			keys += float64(n)
			lo = min(lo, first)
			hi = max(hi, pos)
		}
		read := 0.0
		if qLen > 0 {
			read = float64(hi - lo + 1)
		}
		return prefillKeySum(qLen, cached, window) == keys && prefillKVRead(qLen, cached, window) == read
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

func TestAttentionDecodePerRequest(t *testing.T) {
	bf16, fp8 := mustPrec(t, "bf16"), mustPrec(t, "fp8")
	// heads 32, kvHeads 8, headDim 128, fp8 KV.
	c := AttentionDecode([]int{100, 300}, 32, 8, 128, fp8, bf16, 0)
	if want := 4 * 32 * 128 * 400.0; c.FLOPs != want {
		t.Errorf("FLOPs = %v, want %v", c.FLOPs, want)
	}
	if want := 2 * 400 * 8 * 128 * 1.0; c.KVBytes != want {
		t.Errorf("KVBytes = %v, want %v", c.KVBytes, want)
	}
	if want := 2 * 2 * 32 * 128 * 2.0; c.ActBytes != want {
		t.Errorf("ActBytes = %v, want %v", c.ActBytes, want)
	}
	// Linear without a window: same total KV, same cost.
	a := AttentionDecode([]int{1000, 1000}, 32, 8, 128, bf16, bf16, 0)
	b := AttentionDecode([]int{10, 1990}, 32, 8, 128, bf16, bf16, 0)
	if a != b {
		t.Errorf("full attention not linear in KV length: %+v vs %+v", a, b)
	}
	// With a 512 window: 512+512 keys vs 10+512 keys.
	a = AttentionDecode([]int{1000, 1000}, 32, 8, 128, bf16, bf16, 512)
	b = AttentionDecode([]int{10, 1990}, 32, 8, 128, bf16, bf16, 512)
	if a.FLOPs != 4*32*128*1024.0 || b.FLOPs != 4*32*128*522.0 {
		t.Errorf("sliding decode FLOPs %v, %v", a.FLOPs, b.FLOPs)
	}
}

func TestElementwise(t *testing.T) {
	bf16 := mustPrec(t, "bf16")
	c := Elementwise("rmsnorm", 1000, 4, 2, 1, bf16)
	if c.FLOPs != 4000 || c.ActBytes != 1000*3*2 || c.Kind != KindElementwise || c.Name != "rmsnorm" {
		t.Errorf("got %+v", c)
	}
}

func TestAllReduce(t *testing.T) {
	tests := []struct {
		bytes      float64
		n          int
		bus, flops float64
	}{
		{1 << 20, 4, 2 * 3.0 / 4 * (1 << 20), 3.0 / 4 * (1 << 19)},
		{1 << 20, 2, 1 << 20, 1 << 18},
		{1 << 20, 1, 0, 0},
		{0, 8, 0, 0},
	}
	for _, tt := range tests {
		c := AllReduce(tt.bytes, tt.n)
		if c.Bytes() != tt.bus || c.FLOPs != tt.flops || c.Kind != KindAllReduce {
			t.Errorf("AllReduce(%v, %d) = %+v, want bus %v flops %v", tt.bytes, tt.n, c, tt.bus, tt.flops)
		}
	}
}
