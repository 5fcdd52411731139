package roofline

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/hardware"
)

// Precision is a numeric storage format. Bits is the storage cost of one
// element averaged over a block, including the block's scale metadata:
//
//	Bits = ElementBits + ScaleBits / BlockSize
//
// For unscaled formats BlockSize is 1 and ScaleBits 0.
type Precision struct {
	// Name is the canonical lower-case name, e.g. "bf16", "nvfp4", "q4_k".
	Name string `json:"name"`
	// Bits is the storage bits per element including block scales.
	Bits float64 `json:"bits"`
	// ElementBits is the bits of one quantised element without scales.
	ElementBits int `json:"element_bits"`
	// BlockSize is the number of elements sharing ScaleBits of metadata.
	BlockSize int `json:"block_size"`
	// ScaleBits is the metadata (scales, mins, super-block scales) per block
	// in bits.
	ScaleBits int `json:"scale_bits"`
	// Compute is the key into hardware.GPU.PeakTFLOPS used when this format
	// is computed natively ("fp8", "fp4", ...); "" for weight-only formats
	// that are dequantised to the activation precision before the math.
	Compute string `json:"compute"`
	// Description says what the format is.
	Description string `json:"description"`
}

// BytesPerElement is Bits / 8.
func (p Precision) BytesPerElement() float64 { return p.Bits / 8 }

// format builds a Precision, deriving Bits from the format's definition.
func format(name string, elemBits, block, scaleBits int, compute, desc string) Precision {
	return Precision{
		Name:        name,
		Bits:        float64(elemBits) + float64(scaleBits)/float64(block),
		ElementBits: elemBits,
		BlockSize:   block,
		ScaleBits:   scaleBits,
		Compute:     compute,
		Description: desc,
	}
}

// Precisions returns the catalog in a fixed order. The slice is freshly
// built on every call; callers may modify it.
//
// Choices worth stating:
//   - nvfp4 also has a per-tensor FP32 second-level scale; amortised over a
//     whole weight tensor it is ~0 bits per element and is counted as 0.
//   - mxfp6 computes at the "fp8" peak: Blackwell tensor cores run FP6 at
//     the FP8 rate, and the catalog has no separate fp6 key.
//   - fp8_block is DeepSeek-style FP8 with one FP32 scale per 128x128
//     weight block (the "fp8_block" GEMM dtype of the kernel data).
//   - K-quant ScaleBits counts all per-super-block metadata: sub-block
//     scales/mins plus the FP16 super-block scale(s).
func Precisions() []Precision {
	const (
		e8m0 = 8  // MX shared exponent scale
		e4m3 = 8  // NVFP4 block scale
		f16  = 16 // fp16 scale / min
		f32  = 32 // fp32 absmax
	)
	return []Precision{
		format("fp32", 32, 1, 0, "fp32", "IEEE 754 single precision"),
		format("tf32", 32, 1, 0, "tf32", "TensorFloat-32: 19-bit math, stored as 32-bit fp32"),
		format("fp16", 16, 1, 0, "fp16", "IEEE 754 half precision"),
		format("bf16", 16, 1, 0, "bf16", "bfloat16 (8-bit exponent, 7-bit mantissa)"),
		format("fp8_e4m3", 8, 1, 0, "fp8", "FP8 E4M3 (per-tensor or per-channel scales, ~0 bits/element)"),
		format("fp8_e5m2", 8, 1, 0, "fp8", "FP8 E5M2"),
		format("fp8_block", 8, 128*128, f32, "fp8", "FP8 E4M3 with one FP32 scale per 128x128 weight block"),
		format("int8", 8, 1, 0, "int8", "8-bit integer (per-channel scales, ~0 bits/element)"),
		format("int4", 4, 1, 0, "", "4-bit integer, weight-only (scales ignored)"),
		format("mxfp4", 4, 32, e8m0, "fp4", "OCP MX FP4: E2M1 elements + E8M0 scale per 32"),
		format("mxfp6", 6, 32, e8m0, "fp8", "OCP MX FP6: E3M2/E2M3 elements + E8M0 scale per 32"),
		format("mxfp8", 8, 32, e8m0, "fp8", "OCP MX FP8: E4M3/E5M2 elements + E8M0 scale per 32"),
		format("nvfp4", 4, 16, e4m3, "fp4", "NVIDIA FP4: E2M1 elements + E4M3 scale per 16 (+ per-tensor FP32, amortised to 0)"),
		format("nf4", 4, 64, f32, "", "bitsandbytes NormalFloat4 + FP32 absmax per 64, weight-only"),
		format("q8_0", 8, 32, f16, "", "GGUF Q8_0: 32 x int8 + fp16 scale"),
		format("q4_0", 4, 32, f16, "", "GGUF Q4_0: 32 x 4-bit + fp16 scale"),
		format("q4_1", 4, 32, 2*f16, "", "GGUF Q4_1: 32 x 4-bit + fp16 scale + fp16 min"),
		format("q5_0", 5, 32, f16, "", "GGUF Q5_0: 32 x 5-bit + fp16 scale"),
		format("q5_1", 5, 32, 2*f16, "", "GGUF Q5_1: 32 x 5-bit + fp16 scale + fp16 min"),
		// 256-element super-block: 128 B of 4-bit quants, 12 B of 6-bit
		// sub-block scales and mins, fp16 d and dmin.
		format("q4_k", 4, 256, 12*8+2*f16, "", "GGUF Q4_K (Q4_K_M/S): 256-element super-blocks, 6-bit sub-block scales/mins"),
		// 128 B low nibbles + 32 B high bits (5 bits/element), 12 B scales/mins, fp16 d and dmin.
		format("q5_k", 5, 256, 12*8+2*f16, "", "GGUF Q5_K (Q5_K_M/S): 256-element super-blocks, 6-bit sub-block scales/mins"),
		// 128 B low 4 bits + 64 B high 2 bits, 16 int8 sub-block scales, fp16 d.
		format("q6_k", 6, 256, 16*8+f16, "", "GGUF Q6_K: 256-element super-blocks, int8 sub-block scales"),
	}
}

// canonicalPrecisionName maps accepted spellings to catalog names. It is a
// pure function (no package-level table).
func canonicalPrecisionName(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.ReplaceAll(n, "-", "_")
	switch n {
	case "float32", "float", "f32":
		return "fp32"
	case "float16", "half", "f16":
		return "fp16"
	case "bfloat16":
		return "bf16"
	case "fp8", "float8", "e4m3", "fp8e4m3", "float8_e4m3fn", "float8_e4m3", "f8e4m3":
		return "fp8_e4m3"
	case "e5m2", "fp8e5m2", "float8_e5m2", "f8e5m2":
		return "fp8_e5m2"
	case "fp8_block_scale", "fp8_blockwise":
		return "fp8_block"
	case "q4_k_m", "q4_k_s":
		return "q4_k"
	case "q5_k_m", "q5_k_s":
		return "q5_k"
	}
	return n
}

// LookupPrecision finds a format by name, case-insensitively, accepting
// common aliases ("bfloat16", "half", "fp8", "e5m2", "Q4_K_M", ...).
func LookupPrecision(name string) (Precision, error) {
	c := canonicalPrecisionName(name)
	for _, p := range Precisions() {
		if p.Name == c {
			return p, nil
		}
	}
	if p, ok := groupIntPrecision(c); ok {
		return p, nil
	}
	return Precision{}, &UnknownPrecisionError{Name: name, Known: precisionNames()}
}

// UnknownPrecisionError is a precision name that LookupPrecision does not
// resolve. Known lists the catalog's names; group-quantised integers
// (int4_g<N>[_zp], int8_g<N>[_zp]) are accepted besides.
type UnknownPrecisionError struct {
	Name  string
	Known []string
}

func (e *UnknownPrecisionError) Error() string {
	return fmt.Sprintf("unknown precision %q (known: %s, and int4_g<N>[_zp] / int8_g<N>[_zp] for group-quantised integers)", e.Name, strings.Join(e.Known, ", "))
}

var groupIntName = regexp.MustCompile(`^int(4|8)_g([0-9]+)(_zp)?$`)

// groupIntPrecision builds a group-quantised integer format (GPTQ, AWQ,
// compressed-tensors pack-quantized): int4 or int8 elements with one fp16
// scale per group of N weights and, with _zp, a zero point of the element
// width per group. int4_g128_zp is 4 + (16 + 4)/128 = 4.156 bits. These
// are weight-only formats (they compute at the activation precision).
func groupIntPrecision(name string) (Precision, bool) {
	m := groupIntName.FindStringSubmatch(name)
	if m == nil {
		return Precision{}, false
	}
	bits, _ := strconv.Atoi(m[1])
	group, err := strconv.Atoi(m[2])
	if err != nil || group <= 0 || group > 1<<20 {
		return Precision{}, false
	}
	scale, desc := 16, fmt.Sprintf("%d-bit integer, weight-only, fp16 scale per %d", bits, group)
	if m[3] != "" {
		scale += bits
		desc += fmt.Sprintf(" + %d-bit zero point", bits)
	}
	return format(name, bits, group, scale, "", desc), true
}

func precisionNames() []string {
	ps := Precisions()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// ComputePrecision returns the GPU peak key (e.g. "bf16", "fp8") a matrix
// product of weights in weight and activations in act runs at:
//
//   - weight-only formats (Compute == "") run at the activation's peak,
//     after dequantisation;
//   - a natively computed weight format runs at its own peak only when the
//     activations are in the same precision class (W8A8 fp8, W4A4 fp4) and
//     the GPU has that peak;
//   - otherwise the activation's peak.
//
// gpu may be nil, in which case the peak's existence is not checked.
func ComputePrecision(weight, act Precision, gpu *hardware.GPU) string {
	if act.Compute == "" {
		// Activations in a weight-only format are not meaningful; fall back
		// to the weight's own compute so callers get a clear peak error.
		return weight.Compute
	}
	if weight.Compute == "" || weight.Compute != act.Compute {
		return act.Compute
	}
	if gpu != nil {
		if _, ok := gpu.PeakFLOPS(weight.Compute); !ok {
			return act.Compute
		}
	}
	return weight.Compute
}

// MixPart is one component of a blended weight format: Fraction of the
// weight elements stored in DType.
type MixPart struct {
	DType    string  `json:"dtype" yaml:"dtype"`
	Fraction float64 `json:"fraction" yaml:"fraction"`
}

// ParseWeightMix parses "dtype:fraction,dtype:fraction" (spaces allowed).
func ParseWeightMix(s string) ([]MixPart, error) {
	var out []MixPart
	for i, f := range strings.Split(s, ",") {
		name, frac, ok := strings.Cut(strings.TrimSpace(f), ":")
		if !ok {
			return nil, fmt.Errorf("part %d %q: want dtype:fraction", i, f)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(frac), 64)
		if err != nil {
			return nil, fmt.Errorf("part %d %q: fraction: %v", i, f, err)
		}
		out = append(out, MixPart{DType: strings.TrimSpace(name), Fraction: v})
	}
	return out, nil
}

// BlendPrecision returns the precision of a tensor population stored in
// several formats, such as a GGUF Q4_K_M file (mostly q4_k, with the value
// and down projections of half the layers in q6_k):
//
//	Bits = sum_i Fraction_i * Bits_i
//
// Fractions must be in (0, 1] and sum to 1 (within 1e-6). The blend computes
// at the parts' common Compute key, or "" (weight-only, dequantised) when
// they differ. Name is "mix(" + parts as dtype:fraction + ")".
func BlendPrecision(parts []MixPart) (Precision, error) {
	if len(parts) == 0 {
		return Precision{}, fmt.Errorf("no parts")
	}
	var (
		bits, sum float64
		names     []string
		compute   string
	)
	for i, pt := range parts {
		p, err := LookupPrecision(pt.DType)
		if err != nil {
			return Precision{}, fmt.Errorf("[%d].dtype: %w", i, err)
		}
		if !(pt.Fraction > 0 && pt.Fraction <= 1) {
			return Precision{}, fmt.Errorf("[%d].fraction: must be in (0, 1], got %g", i, pt.Fraction)
		}
		if i == 0 {
			compute = p.Compute
		} else if p.Compute != compute {
			compute = ""
		}
		bits += pt.Fraction * p.Bits
		sum += pt.Fraction
		names = append(names, fmt.Sprintf("%s:%.4g", p.Name, pt.Fraction))
	}
	if d := sum - 1; d > 1e-6 || d < -1e-6 {
		return Precision{}, fmt.Errorf("fractions: must sum to 1, got %g", sum)
	}
	if len(parts) == 1 {
		return LookupPrecision(parts[0].DType)
	}
	return Precision{
		Name:        "mix(" + strings.Join(names, ",") + ")",
		Bits:        bits,
		ElementBits: int(math.Round(bits)),
		BlockSize:   1,
		Compute:     compute,
		Description: "blend of " + strings.Join(names, ", "),
	}, nil
}
