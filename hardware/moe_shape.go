package hardware

import (
	"fmt"
	"strconv"
	"strings"
)

// FusedMoEShape is the expert shape one GPU's fused MoE kernel runs: the
// hidden size, the expert width on the GPU (the model's expert
// intermediate size divided by the MoE tensor-parallel degree), top-k, the
// model's expert count and the expert-parallel degree (1 when off).
//
// vLLM's Triton fused_moe picks its tile configuration per (experts, width,
// device, dtype): from a tuned JSON file when the release ships one for the
// GPU, else from a default rule (vllm/model_executor/layers/fused_moe/
// fused_moe.py get_config_file_name, try_get_optimal_moe_config,
// get_default_config; the tuned files are under
// vllm/model_executor/layers/fused_moe/configs/). The attainable fraction
// of peak and bandwidth therefore differs between shapes in ways one curve
// per format cannot follow (on H100 bf16, Mixtral-8x7B's experts at
// MoE-TP 2, which have a tuned file, reach about three times the compute
// efficiency of the same experts at MoE-TP 1, which do not). A FusedMoE
// entry keyed by a format and a shape (FusedMoEShape.Key) carries the fit
// of that shape's own measured rows.
type FusedMoEShape struct {
	Hidden, Inter, TopK, Experts, EP int
}

// fusedMoEShapeSep separates the format from the shape in a FusedMoE key.
const fusedMoEShapeSep = "@"

// Key is the FusedMoE key of format's entry for s:
// "<format>@<hidden>x<inter>x<topk>x<experts>/ep<EP>" (EP 0 is written 1).
func (s FusedMoEShape) Key(format string) string {
	return fmt.Sprintf("%s%s%dx%dx%dx%d/ep%d", format, fusedMoEShapeSep, s.Hidden, s.Inter, s.TopK, s.Experts, max(s.EP, 1))
}

// isShapeKey reports whether a FusedMoE key names a shape entry.
func isShapeKey(k string) bool { return strings.Contains(k, fusedMoEShapeSep) }

// parseShapeKey splits a shape key into its format and shape; ok is false
// for a key that is not of FusedMoEShape.Key's form.
func parseShapeKey(k string) (format string, s FusedMoEShape, ok bool) {
	format, rest, found := strings.Cut(k, fusedMoEShapeSep)
	dims, ep, found2 := strings.Cut(rest, "/ep")
	parts := strings.Split(dims, "x")
	if !found || !found2 || format == "" || len(parts) != 4 {
		return "", s, false
	}
	var v [5]int
	for i, p := range append(parts, ep) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return "", s, false
		}
		v[i] = n
	}
	s = FusedMoEShape{Hidden: v[0], Inter: v[1], TopK: v[2], Experts: v[3], EP: v[4]}
	return format, s, s.Key(format) == k
}

// LookupShape returns the entry of format measured at shape s when f holds
// one (exactly that format: a shape's tile configuration is the format's
// own), else Lookup(format).
func (f FusedMoE) LookupShape(format string, s FusedMoEShape) (e OpEfficiency, key string, ok bool) {
	k := s.Key(format)
	if e, ok := f[k]; ok {
		return e, k, true
	}
	return f.Lookup(format)
}

// SplitShapes splits f into its per-format curves, which carry to GPUs and
// shapes the tables did not measure, and its shape entries (nil when none).
func (f FusedMoE) SplitShapes() (generic, shapes FusedMoE) {
	for k, e := range f {
		if isShapeKey(k) {
			if shapes == nil {
				shapes = FusedMoE{}
			}
			shapes[k] = e
			continue
		}
		if generic == nil {
			generic = FusedMoE{}
		}
		generic[k] = e
	}
	return generic, shapes
}
