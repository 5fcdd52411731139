package roofline

import (
	"github.com/roofsim/roofsim/hardware"
	"strings"
	"testing"
)

func TestPrecisionBits(t *testing.T) {
	tests := []struct {
		name string
		bits float64 // from the format definition, computed by hand
	}{
		{"fp32", 32}, {"tf32", 32}, {"fp16", 16}, {"bf16", 16},
		{"fp8_e4m3", 8}, {"fp8_e5m2", 8}, {"int8", 8}, {"int4", 4},
		{"mxfp4", 4 + 8.0/32},                     // E2M1 + E8M0 per 32 = 4.25
		{"mxfp6", 6 + 8.0/32},                     // 6.25
		{"mxfp8", 8 + 8.0/32},                     // 8.25
		{"nvfp4", 4 + 8.0/16},                     // E2M1 + E4M3 per 16 = 4.5
		{"nf4", 4 + 32.0/64},                      // 4.5
		{"q8_0", (32 + 2) * 8 / 32.0},             // 34 B per 32 = 8.5
		{"q4_0", (16 + 2) * 8 / 32.0},             // 18 B per 32 = 4.5
		{"q4_1", (16 + 4) * 8 / 32.0},             // 20 B per 32 = 5.0
		{"q5_0", (20 + 2) * 8 / 32.0},             // 22 B per 32 = 5.5
		{"q5_1", (20 + 4) * 8 / 32.0},             // 24 B per 32 = 6.0
		{"q4_k", (128 + 12 + 4) * 8 / 256.0},      // 144 B per 256 = 4.5
		{"q5_k", (128 + 32 + 12 + 4) * 8 / 256.0}, // 176 B per 256 = 5.5
		{"q6_k", (128 + 64 + 16 + 2) * 8 / 256.0}, // 210 B per 256 = 6.5625
		{"fp8_block", 8 + 32.0/(128*128)},
	}
	for _, tt := range tests {
		p := mustPrec(t, tt.name)
		if p.Bits != tt.bits {
			t.Errorf("%s: Bits = %v, want %v", tt.name, p.Bits, tt.bits)
		}
		if got := float64(p.ElementBits) + float64(p.ScaleBits)/float64(p.BlockSize); got != p.Bits {
			t.Errorf("%s: Bits %v is not ElementBits + ScaleBits/BlockSize = %v", tt.name, p.Bits, got)
		}
		if p.BytesPerElement() != tt.bits/8 {
			t.Errorf("%s: BytesPerElement = %v", tt.name, p.BytesPerElement())
		}
	}
	// Every catalog format has its bits derived by hand above (its source),
	// decomposes into element and scale bits, and round-trips by name.
	hand := map[string]bool{}
	for _, tt := range tests {
		hand[tt.name] = true
	}
	for _, p := range Precisions() {
		if !hand[p.Name] {
			t.Errorf("%s: no hand derivation of its bits in this test", p.Name)
		}
		if got := float64(p.ElementBits) + float64(p.ScaleBits)/float64(p.BlockSize); got != p.Bits {
			t.Errorf("%s: Bits %v is not ElementBits + ScaleBits/BlockSize = %v", p.Name, p.Bits, got)
		}
		if q, err := LookupPrecision(p.Name); err != nil || q.Name != p.Name {
			t.Errorf("LookupPrecision(%q) = %v, %v", p.Name, q, err)
		}
	}
}

func TestPrecisionCompute(t *testing.T) {
	want := map[string]string{
		"fp32": "fp32", "tf32": "tf32", "fp16": "fp16", "bf16": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8",
		"fp8_block": "fp8", "int8": "int8", "nvfp4": "fp4", "mxfp4": "fp4", "mxfp8": "fp8", "mxfp6": "fp8",
		"int4": "", "nf4": "", "q8_0": "", "q4_0": "", "q4_1": "", "q5_0": "", "q5_1": "", "q4_k": "", "q5_k": "", "q6_k": "",
	}
	for _, p := range Precisions() {
		w, ok := want[p.Name]
		if !ok {
			t.Errorf("%s: not in the test table", p.Name)
			continue
		}
		if p.Compute != w {
			t.Errorf("%s: Compute = %q, want %q", p.Name, p.Compute, w)
		}
	}
}

func TestLookupPrecisionAliases(t *testing.T) {
	tests := map[string]string{
		"bfloat16": "bf16", "BF16": "bf16", "float16": "fp16", "half": "fp16", "fp8": "fp8_e4m3",
		"e4m3": "fp8_e4m3", "E5M2": "fp8_e5m2", "Q8_0": "q8_0", "Q4_K_M": "q4_k", "q4_k_s": "q4_k",
		"Q5_K_M": "q5_k", "fp8_block": "fp8_block", "NVFP4": "nvfp4", " mxfp4 ": "mxfp4", "float32": "fp32",
		"fp8-e4m3": "fp8_e4m3",
	}
	for in, want := range tests {
		p, err := LookupPrecision(in)
		if err != nil {
			t.Errorf("LookupPrecision(%q): %v", in, err)
			continue
		}
		if p.Name != want {
			t.Errorf("LookupPrecision(%q) = %s, want %s", in, p.Name, want)
		}
	}
	if _, err := LookupPrecision("fp7"); err == nil || !strings.Contains(err.Error(), `unknown precision "fp7"`) {
		t.Errorf("unknown precision error = %v", err)
	}
}

func TestComputePrecision(t *testing.T) {
	tests := []struct {
		w, act string
		gpu    string
		want   string
	}{
		{"bf16", "bf16", "h100", "bf16"},
		{"q4_k", "bf16", "h100", "bf16"}, // weight-only: activation peak
		{"int4", "fp16", "t4", "fp16"},   // weight-only on a part without bf16
		{"nf4", "fp16", "h100", "fp16"},  // weight-only
		{"fp8", "bf16", "h100", "bf16"},  // W8A16: activation peak
		{"fp8", "fp8", "h100", "fp8"},    // W8A8 on a part with fp8
		{"fp8_block", "e5m2", "h100", "fp8"},
		{"fp8", "fp8", "a100", "fp8"},     // class matches but no peak: activation's (AnalyzeOnGPU then errors)
		{"nvfp4", "nvfp4", "b200", "fp4"}, // W4A4
		{"mxfp4", "nvfp4", "b200", "fp4"}, // same fp4 class
		{"nvfp4", "bf16", "b200", "bf16"}, // W4A16
		{"nvfp4", "fp8", "b200", "fp8"},   // different class: activation peak
		{"int8", "int8", "h100", "int8"},
	}
	gpus := map[string]func() *hardware.GPU{"h100": h100, "a100": a100, "t4": t4, "b200": b200}
	for _, tt := range tests {
		got := ComputePrecision(mustPrec(t, tt.w), mustPrec(t, tt.act), gpus[tt.gpu]())
		if got != tt.want {
			t.Errorf("ComputePrecision(%s, %s, %s) = %q, want %q", tt.w, tt.act, tt.gpu, got, tt.want)
		}
	}
}
