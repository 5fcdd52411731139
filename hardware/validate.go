package hardware

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/roofsim/roofsim/internal/limits"
)

// Precisions returns the compute precision names a peak_tflops map may use,
// from widest to narrowest. The slice is fresh on each call.
func Precisions() []string {
	return []string{"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"}
}

func isPrecision(name string) bool {
	for _, p := range Precisions() {
		if p == name {
			return true
		}
	}
	return false
}

// FieldError is a validation failure of one field. Path is the dotted YAML
// key path of the field (e.g. "peak_tflops.bf16", "profile.gemm.compute.max")
// so that file loaders can point at the offending line.
type FieldError struct {
	// GPU is the name of the GPU being validated; empty for a bare profile.
	GPU string
	// Path is the dotted YAML key path.
	Path string
	// Reason says what is wrong, e.g. "must be > 0".
	Reason string
}

func (e *FieldError) Error() string {
	if e.GPU != "" {
		return fmt.Sprintf("gpu %q: %s: %s", e.GPU, e.Path, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Reason)
}

// fieldErr is the shorthand the checks below use.
func fieldErr(path, reason string) *FieldError { return &FieldError{Path: path, Reason: reason} }

// nonNegative checks v >= 0 and finite (NaN fails).
func nonNegative(path string, v float64) *FieldError {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fieldErr(path, "must be >= 0")
	}
	return nil
}

// within checks lo <= v <= hi (NaN fails), with limits' message.
func within(path string, v, lo, hi float64) *FieldError {
	if err := limits.FloatIn(v, lo, hi); err != nil {
		return fieldErr(path, err.Error())
	}
	return nil
}

// overhead checks a fixed time in microseconds: [0, limits.MaxOverheadUS].
func overhead(path string, v float64) *FieldError {
	return within(path, v, 0, limits.MaxOverheadUS)
}

// Validate reports the first problem with g, checking fields in schema order,
// as a *FieldError naming the field: `gpu "foo": peak_tflops.bf16: must be > 0`.
// A nil profile is valid (DefaultProfile applies).
func (g *GPU) Validate() error {
	if g == nil {
		return fieldErr("gpu", "is missing")
	}
	if err := g.validate(); err != nil {
		err.GPU = g.Name
		return err
	}
	return nil
}

func (g *GPU) validate() *FieldError {
	if strings.TrimSpace(g.Name) == "" {
		return fieldErr("name", "must be non-empty")
	}
	for i, a := range g.Aliases {
		if strings.TrimSpace(a) == "" {
			return fieldErr(fmt.Sprintf("aliases[%d]", i), "must be non-empty")
		}
	}
	if err := g.Arch.Validate(); err != nil {
		return fieldErr("arch", err.Error())
	}
	if len(g.PeakTFLOPS) == 0 {
		return fieldErr("peak_tflops", "must give at least one precision (fp32, tf32, fp16, bf16, fp8, int8, fp4)")
	}
	keys := make([]string, 0, len(g.PeakTFLOPS))
	for k := range g.PeakTFLOPS {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isPrecision(k) {
			return fieldErr("peak_tflops."+k, "unknown precision (known: "+strings.Join(Precisions(), ", ")+")")
		}
	}
	// Physical decades (internal/limits): a figure outside them is a typo or a unit
	// mix-up, and would overflow the step model's times or the KV sizing.
	for _, k := range keys {
		if err := within("peak_tflops."+k, g.PeakTFLOPS[k], limits.MinPeakTFLOPS, limits.MaxPeakTFLOPS); err != nil {
			return err
		}
	}
	if err := within("memory_bandwidth_gbps", g.MemoryBandwidthGBps, limits.MinBandwidthGBps, limits.MaxBandwidthGBps); err != nil {
		return err
	}
	if err := within("memory_gib", g.MemoryGiB, limits.MinMemoryGiB, limits.MaxMemoryGiB); err != nil {
		return err
	}
	if err := within("usable_memory_gib", g.UsableMemoryGiB, 0, limits.MaxMemoryGiB); err != nil {
		return err
	}
	if g.UsableMemoryGiB > g.MemoryGiB {
		return fieldErr("usable_memory_gib", fmt.Sprintf("must be <= memory_gib (%g)", g.MemoryGiB))
	}
	if err := within("interconnect_gbps", g.InterconnectGBps, 0, limits.MaxInterconnectGBps); err != nil {
		return err
	}
	if err := within("l2_mib", g.L2MiB, 0, limits.MaxL2MiB); err != nil {
		return err
	}
	if g.Profile != nil {
		if err := g.Profile.validate(); err != nil {
			err.Path = "profile." + err.Path
			return err
		}
	}
	return nil
}

// Validate reports the first problem with p as a *FieldError whose path is
// relative to the profile (e.g. "gemm.compute.max: must be in (0, 1]").
func (p *Profile) Validate() error {
	if p == nil {
		return fieldErr("profile", "is missing")
	}
	if err := p.validate(); err != nil {
		return err
	}
	return nil
}

func (p *Profile) validate() *FieldError {
	ops := []struct {
		key string
		op  OpEfficiency
	}{
		{"gemm", p.GEMM},
		{"attention_prefill", p.AttentionPrefill},
		{"attention_decode", p.AttentionDecode},
		{"elementwise", p.Elementwise},
		{"moe", p.MoE},
	}
	for _, o := range ops {
		if err := o.op.validate(o.key); err != nil {
			return err
		}
	}
	for _, m := range []struct {
		field, what string
		effs        map[string]OpEfficiency
	}{
		{"gemm_by_precision", "precision", p.GEMMByPrecision},
		{"moe_by_precision", "format", p.MoEByPrecision},
		{"attention_prefill_by_kv", "precision", p.AttentionPrefillByKV},
	} {
		if err := validateByName(m.field, m.what, m.effs); err != nil {
			return err
		}
	}
	if err := p.validateMixers(); err != nil {
		return err
	}
	if !(p.MoEActiveFraction >= 0 && p.MoEActiveFraction <= 1) {
		return fieldErr("moe_active_fraction", "must be in [0, 1]")
	}
	if err := p.AllReduce.validate("allreduce"); err != nil {
		return err
	}
	if p.FusedMoEFrom != "" && len(p.FusedMoE) > 0 {
		return fieldErr("fused_moe_from", "give fused_moe or fused_moe_from, not both")
	}
	if err := p.EngineTerms().validate(); err != nil {
		return err
	}
	if err := overhead("per_request_kv_head_us", p.PerRequestKVHeadUS); err != nil {
		return err
	}
	if !(p.ServingComputeEfficiency >= 0 && p.ServingComputeEfficiency <= 1) {
		return fieldErr("serving_compute_efficiency", "must be in [0, 1] (0 means 1)")
	}
	if !(p.ServingAllReduceEfficiency >= 0 && p.ServingAllReduceEfficiency <= 1) {
		return fieldErr("serving_allreduce_efficiency", "must be in [0, 1] (0 means 1)")
	}
	if err := overhead("allreduce_sync_us", p.AllReduceSyncUS); err != nil {
		return err
	}
	if !(p.GEMMInputFusedFraction >= 0 && p.GEMMInputFusedFraction <= 1) {
		return fieldErr("gemm_input_fused_fraction", "must be in [0, 1]")
	}
	return p.Provenance.validate("provenance")
}

// validate checks each stage: a known kind, at most one stage of each
// kind, non-negative row counts, and for each data file a path and, when
// given, a SHA-256 of 64 lower-case hex digits.
func (pv Provenance) validate(prefix string) *FieldError {
	seen := map[StageKind]bool{}
	for i, st := range pv {
		at := fmt.Sprintf("%s[%d]", prefix, i)
		if _, err := ParseStageKind(string(st.Stage)); err != nil {
			return fieldErr(at+".stage", err.Error())
		}
		if seen[st.Stage] {
			return fieldErr(at+".stage", fmt.Sprintf("a second %q stage (a later fit of a kind replaces the earlier one)", st.Stage))
		}
		seen[st.Stage] = true
		if st.Rows < 0 {
			return fieldErr(at+".rows", "must be >= 0")
		}
		for j, d := range st.Data {
			dat := fmt.Sprintf("%s.data[%d]", at, j)
			if strings.TrimSpace(d.Path) == "" {
				return fieldErr(dat+".path", "must be non-empty")
			}
			if d.SHA256 != "" && !IsSHA256(d.SHA256) {
				return fieldErr(dat+".sha256", "must be 64 lower-case hex digits (or left out)")
			}
			if d.Rows < 0 {
				return fieldErr(dat+".rows", "must be >= 0")
			}
		}
	}
	return nil
}

// IsSHA256 reports whether s has the shape of a hex SHA-256: 64 lower-case
// hex digits.
func IsSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (o OpEfficiency) validate(prefix string) *FieldError {
	if err := o.Compute.validate(prefix + ".compute"); err != nil {
		return err
	}
	if err := o.Memory.validate(prefix + ".memory"); err != nil {
		return err
	}
	if err := overhead(prefix+".launch_us", o.LaunchUS); err != nil {
		return err
	}
	if err := overhead(prefix+".per_seq_head_us", o.PerSeqHeadUS); err != nil {
		return err
	}
	if !o.MemoryIndex.Known() {
		return fieldErr(prefix+".memory_index", fmt.Sprintf("unknown memory index %q (known: \"\" for bytes, %q)", o.MemoryIndex, MemoryByPairBytes))
	}
	if err := limits.IntAtMost(o.TileM, 1<<16); err != nil {
		return fieldErr(prefix+".tile_m", err.Error())
	}
	if err := limits.IntAtMost(o.TileN, 1<<16); err != nil {
		return fieldErr(prefix+".tile_n", err.Error())
	}
	if (o.TileM > 0) != (o.TileN > 0) {
		return fieldErr(prefix+".tile_n", "tile_m and tile_n must both be set or both be 0")
	}
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"k_half", o.KHalf}, {"input_element_ns", o.InputElementNS}, {"input_spill_ns", o.InputSpillNS},
		{"input_spill_elements", o.InputSpillElements}, {"output_element_ns", o.OutputElementNS}, {"l2_speedup", o.L2Speedup},
		{"expert_k_half", o.ExpertKHalf},
	} {
		if err := nonNegative(prefix+"."+f.key, f.v); err != nil {
			return err
		}
	}
	if err := overhead(prefix+".bench_host_us", o.BenchHostUS); err != nil {
		return err
	}
	if o.InputSpillNS > 0 && o.InputSpillElements == 0 {
		return fieldErr(prefix+".input_spill_elements", "must be > 0 when input_spill_ns is set (the input size where the spill phases in)")
	}
	if o.KHalf > 0 && !o.Tiled() {
		return fieldErr(prefix+".k_half", "needs tile_m and tile_n (the depth term is per output tile)")
	}
	return o.DefaultTiles.validateSlowdown(prefix + ".default_tiles")
}

func (c Curve) validate(prefix string) *FieldError {
	// An efficiency below 0.1% is a unit mistake, and would price steps in days.
	if err := within(prefix+".max", c.Max, 1e-3, 1); err != nil {
		return err
	}
	if err := within(prefix+".exp", c.Exp, 0, limits.MaxCurveExp); err != nil {
		return err
	}
	return nonNegative(prefix+".half", c.Half)
}

func (a AllReduce) validate(prefix string) *FieldError {
	if err := overhead(prefix+".latency_us", a.LatencyUS); err != nil {
		return err
	}
	// 0 is allowed: the bus bandwidth then comes from the GPU's interconnect.
	if err := within(prefix+".bus_bandwidth_gbps", a.BusBandwidthGBps, 0, limits.MaxBandwidthGBps); err != nil {
		return err
	}
	ns := make([]int, 0, len(a.ByGPUs))
	for n := range a.ByGPUs {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		pt := a.ByGPUs[n]
		p := fmt.Sprintf("%s.by_gpus.%d", prefix, n)
		if n < 2 {
			return fieldErr(p, "GPU count must be >= 2")
		}
		if err := overhead(p+".latency_us", pt.LatencyUS); err != nil {
			return err
		}
		if err := within(p+".bus_bandwidth_gbps", pt.BusBandwidthGBps, 1e-3, limits.MaxBandwidthGBps); err != nil {
			return err
		}
		if err := nonNegative(p+".switch_bytes", pt.SwitchBytes); err != nil {
			return err
		}
		if pt.SwitchBytes > 0 {
			if err := overhead(p+".large_latency_us", pt.LargeLatencyUS); err != nil {
				return err
			}
			if err := within(p+".large_bus_bandwidth_gbps", pt.LargeBusBandwidthGBps, 1e-3, limits.MaxBandwidthGBps); err != nil {
				return err
			}
		} else if pt.LargeLatencyUS != 0 || pt.LargeBusBandwidthGBps != 0 {
			return fieldErr(p+".switch_bytes", "must be > 0 when large_latency_us or large_bus_bandwidth_gbps is set")
		}
	}
	return nil
}

// validateByName checks a map of efficiencies keyed by a precision or
// format name, in key order: no empty name, every entry valid.
func validateByName(field, what string, effs map[string]OpEfficiency) *FieldError {
	for _, k := range slices.Sorted(maps.Keys(effs)) {
		if k == "" {
			return fieldErr(field, what+" name must not be empty")
		}
		if err := effs[k].validate(field + "." + k); err != nil {
			return err
		}
	}
	return nil
}
