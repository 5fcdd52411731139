// Package hardware owns the GPU catalog and the efficiency profiles that turn
// roofline peaks into achievable rates.
//
// Reading order: gpu.go (the GPU type and its units), profile.go (efficiency
// curves, default vs calibrated), provenance.go (how a profile was made:
// its calibration stages, their commands and data checksums), validate.go
// (what a valid GPU and profile are), decode.go (strict YAML parsing of GPU and profile files), catalog.go
// (the embedded catalog and per-GPU profile files, lookup by name or path),
// engine_terms.go and engine_profile.go (a serving engine release's terms,
// fusions and kernel paths, which the catalog gives every profile file of
// that release), moe_borrow.go (fused_moe_from: a GPU without MoE tables
// using another's fit).
// The YAML schema is documented in docs/gpu-schema.md.
package hardware

// GPU describes one accelerator. All rates are dense (no sparsity) peaks.
// Field names carry units; YAML keys are the schema documented in
// docs/gpu-schema.md.
type GPU struct {
	// Name is the canonical lower-case catalog name, e.g. "h100".
	Name string `yaml:"name" json:"name"`
	// Aliases are other accepted names (case-insensitive), e.g. "h100-sxm".
	Aliases []string `yaml:"aliases,omitempty" json:"aliases,omitempty"`
	// Description is a human label, e.g. "NVIDIA H100 SXM5 80GB".
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Arch is the compute architecture ("sm90"), which engines choose kernel
	// paths by (engine.Engine.MoEKernel). "" means unknown: no
	// architecture-specific kernel path is taken.
	Arch Arch `yaml:"arch,omitempty" json:"arch,omitempty"`
	// VLLMDeviceName is the device name vLLM reads for the GPU
	// (torch.cuda.get_device_name, e.g. "NVIDIA H100 80GB HBM3"), which
	// keys the engine's tuned fused-MoE tile configurations
	// (MoETileConfigs). "" means unknown: every expert shape is taken to
	// run the kernel's default tiles.
	VLLMDeviceName string `yaml:"vllm_device_name,omitempty" json:"vllm_device_name,omitempty"`
	// PeakTFLOPS is the dense peak in 1e12 FLOP/s keyed by compute precision
	// name: fp32, tf32, fp16, bf16, fp8, int8, fp4. A missing key means the
	// part has no native support for that precision.
	PeakTFLOPS map[string]float64 `yaml:"peak_tflops" json:"peak_tflops"`
	// MemoryBandwidthGBps is the nominal DRAM bandwidth in 1e9 bytes/s.
	MemoryBandwidthGBps float64 `yaml:"memory_bandwidth_gbps" json:"memory_bandwidth_gbps"`
	// MemoryGiB is the nominal device memory capacity in GiB (2^30 bytes):
	// the datasheet "GB" figure read as GiB (HBM stacks are binary-sized, so
	// an "80 GB" H100 carries 5 x 16 GiB).
	MemoryGiB float64 `yaml:"memory_gib" json:"memory_gib"`
	// UsableMemoryGiB is the total the CUDA driver reports (cudaMemGetInfo,
	// PyTorch "total capacity", vLLM "total_gpu_memory") in GiB: what vLLM
	// multiplies by gpu_memory_utilization. It is a little below MemoryGiB
	// (ECC, driver reservations) and varies by ~0.1 GiB with the driver.
	// 0 means unknown; UsableMemoryBytes then falls back to MemoryGiB.
	UsableMemoryGiB float64 `yaml:"usable_memory_gib,omitempty" json:"usable_memory_gib,omitempty"`
	// InterconnectGBps is the per-GPU, per-direction GPU-to-GPU bandwidth
	// (NVLink, or PCIe when the part has no NVLink) in 1e9 bytes/s.
	InterconnectGBps float64 `yaml:"interconnect_gbps,omitempty" json:"interconnect_gbps,omitempty"`
	// L2MiB is the last-level on-chip cache size in MiB.
	L2MiB float64 `yaml:"l2_mib,omitempty" json:"l2_mib,omitempty"`
	// UnifiedMemory is true when device memory is shared with the host OS
	// (GB10 / DGX Spark); KV capacity then reserves room for the OS.
	UnifiedMemory bool `yaml:"unified_memory,omitempty" json:"unified_memory,omitempty"`
	// Sources cites where each figure came from, keyed by field name.
	Sources map[string]string `yaml:"sources,omitempty" json:"sources,omitempty"`
	// Profile holds the efficiencies and overheads used by the step model.
	// A nil profile means DefaultProfile().
	Profile *Profile `yaml:"profile,omitempty" json:"profile,omitempty"`
	// Releases are the GPU's kernel profiles per engine release
	// (profiles/<gpu>/<engine>-<release>.yaml), oldest first within an
	// engine; ForRelease picks among them. Not part of a GPU file.
	Releases []ReleaseProfile `yaml:"-" json:"-"`
}

// PeakFLOPS returns the dense peak in FLOP/s for a compute precision name
// (e.g. "bf16"), and false when the part does not support it natively.
func (g *GPU) PeakFLOPS(precision string) (float64, bool) {
	t, ok := g.PeakTFLOPS[precision]
	if !ok || t <= 0 {
		return 0, false
	}
	return t * 1e12, true
}

// BandwidthBytesPerSec is the nominal memory bandwidth in bytes/s.
func (g *GPU) BandwidthBytesPerSec() float64 { return g.MemoryBandwidthGBps * 1e9 }

// MemoryBytes is the device memory capacity in bytes.
func (g *GPU) MemoryBytes() float64 { return g.MemoryGiB * (1 << 30) }

// UsableMemoryBytes is the capacity the CUDA driver reports, in bytes: the
// base of vLLM-style KV-cache sizing. It falls back to MemoryBytes when the
// GPU does not give usable_memory_gib.
func (g *GPU) UsableMemoryBytes() float64 {
	if g.UsableMemoryGiB > 0 {
		return g.UsableMemoryGiB * (1 << 30)
	}
	return g.MemoryBytes()
}

// InterconnectBytesPerSec is the per-direction link bandwidth in bytes/s.
func (g *GPU) InterconnectBytesPerSec() float64 { return g.InterconnectGBps * 1e9 }

// EffectiveProfile returns the GPU's profile, or DefaultProfile() when none
// is set. It never returns nil.
func (g *GPU) EffectiveProfile() *Profile {
	if g.Profile != nil {
		return g.Profile
	}
	return DefaultProfile()
}

// Clone returns a deep copy of g: its maps, slices and profile are not shared
// with g.
func (g *GPU) Clone() *GPU {
	if g == nil {
		return nil
	}
	c := *g
	if g.Aliases != nil {
		c.Aliases = append([]string(nil), g.Aliases...)
	}
	if g.PeakTFLOPS != nil {
		c.PeakTFLOPS = make(map[string]float64, len(g.PeakTFLOPS))
		for k, v := range g.PeakTFLOPS {
			c.PeakTFLOPS[k] = v
		}
	}
	if g.Sources != nil {
		c.Sources = make(map[string]string, len(g.Sources))
		for k, v := range g.Sources {
			c.Sources[k] = v
		}
	}
	c.Profile = g.Profile.Clone()
	if g.Releases != nil {
		c.Releases = make([]ReleaseProfile, len(g.Releases))
		for i, r := range g.Releases {
			r.Profile = r.Profile.Clone()
			c.Releases[i] = r
		}
	}
	return &c
}
