package settings

import (
	"fmt"
	"math"
	"slices"

	"github.com/roofsim/roofsim/internal/limits"
	"github.com/roofsim/roofsim/internal/registry"
	"github.com/roofsim/roofsim/routing"
)

// Disaggregation splits a deployment into a prefill pool and a decode pool,
// as NVIDIA Dynamo, llm-d and vLLM's disaggregated prefill do: a request is
// prefilled on a prefill instance, its KV cache moves over KVTransfer's link
// to a decode instance, and it decodes there. It is off when both pools have
// zero replicas (the default); on, each pool needs at least one replica, and
// the top-level replicas and router no longer place requests (each pool has
// its own router).
type Disaggregation struct {
	// Prefill is the pool that computes prompts.
	Prefill Pool `yaml:"prefill,omitempty" mapstructure:"prefill" json:"prefill,omitzero" flag:"prefill-"`
	// Decode is the pool that generates the output tokens.
	Decode Pool `yaml:"decode,omitempty" mapstructure:"decode" json:"decode,omitzero" flag:"decode-"`
	// KVTransfer is the link a request's KV cache crosses between the pools.
	KVTransfer KVTransfer `yaml:"kv_transfer,omitempty" mapstructure:"kv_transfer" json:"kv_transfer,omitzero" flag:"kv-"`
}

// Pool is one side of a disaggregated deployment: its instances, their
// tensor-parallel degree and GPU, and the router that spreads requests over
// them. Every other setting (model, precisions, serving knobs) is the
// deployment's.
type Pool struct {
	// Replicas is the number of instances in the pool (0 in both pools:
	// disaggregation off).
	Replicas int `yaml:"replicas,omitempty" mapstructure:"replicas" json:"replicas,omitempty" help:"disaggregated serving: instances in this pool (0 in both pools: off)"`
	// TP is the pool's tensor-parallel degree; 0 takes the deployment's tp.
	TP int `yaml:"tp,omitempty" mapstructure:"tp" json:"tp,omitempty" help:"tensor-parallel degree of this pool's instances (0: the deployment's tp)"`
	// GPU is the pool's GPU, a catalog name or a GPU YAML file; "" takes the
	// deployment's gpu.
	GPU string `yaml:"gpu,omitempty" mapstructure:"gpu" json:"gpu,omitempty" help:"GPU of this pool (empty: the deployment's gpu)"`
	// Router picks the pool's instance for each request; "" takes the
	// deployment's router.
	Router routing.Router `yaml:"router,omitempty" mapstructure:"router" json:"router,omitempty" help:"router of this pool: round-robin, least-outstanding or prefix-affinity (empty: the deployment's router)"`
}

// KVTransfer is the link that carries a request's KV cache from its prefill
// instance to its decode instance: a preset and, optionally, its numbers
// replaced. A transfer takes LatencyUS plus the bytes each receiving GPU gets
// over BandwidthGbps.
type KVTransfer struct {
	// Link is the preset: nvlink (within a node) or rdma (across nodes, the
	// default: "").
	Link KVLink `yaml:"link,omitempty" mapstructure:"link" json:"link,omitempty" help:"KV transfer link preset: nvlink (within a node) or rdma (across nodes; empty: rdma)"`
	// BandwidthGbps is the link's bandwidth per GPU and direction, in Gbit/s;
	// 0 takes the preset's.
	BandwidthGbps float64 `yaml:"bandwidth_gbps,omitempty" mapstructure:"bandwidth_gbps" json:"bandwidth_gbps,omitempty" help:"KV transfer bandwidth per GPU, Gbit/s (0: the link preset's)"`
	// LatencyUS is the fixed time of one request's transfer, in µs; 0 takes
	// the preset's.
	LatencyUS float64 `yaml:"latency_us,omitempty" mapstructure:"latency_us" json:"latency_us,omitempty" help:"KV transfer latency per request, µs (0: the link preset's)"`
}

// KVLink names a KV transfer link preset. The zero KVLink ("") means
// LinkRDMA. Its text form is the name.
type KVLink string

// The link presets.
const (
	// LinkNVLink is a transfer between GPUs of one node over NVLink.
	LinkNVLink KVLink = "nvlink"
	// LinkRDMA is a transfer between nodes over an RDMA NIC per GPU
	// (InfiniBand or RoCE).
	LinkRDMA KVLink = "rdma"
)

// LinkPreset is a link's numbers.
type LinkPreset struct {
	// BandwidthGbps is per GPU and direction, in Gbit/s.
	BandwidthGbps float64
	// LatencyUS is per transfer, in µs.
	LatencyUS float64
	// Source says where the numbers come from.
	Source string
}

// linkPresets are the presets' numbers. Bandwidths are the hardware's
// nominal per-GPU figures, not measured throughput; latencies are an order of
// magnitude for one transfer's set-up and completion notice (NIXL posts a
// read per block list and notifies the sender), chosen, not fitted.
func linkPresets() registry.Table[LinkPreset] {
	return registry.Table[LinkPreset]{Entries: []registry.Entry[LinkPreset]{
		{Name: string(LinkNVLink), Value: LinkPreset{BandwidthGbps: 3600, LatencyUS: 10,
			Source: "NVLink 4 on H100 SXM: 900 GB/s per GPU both directions together, so 450 GB/s = 3600 Gbit/s each way (NVIDIA H100 datasheet); latency chosen"}},
		{Name: string(LinkRDMA), Value: LinkPreset{BandwidthGbps: 400, LatencyUS: 50,
			Source: "one 400 Gbit/s ConnectX-7 NIC per GPU (NVIDIA DGX H100 datasheet: 8 x 400 Gb/s for 8 GPUs); latency chosen"}},
	}}
}

// KVLinks lists the presets' names.
func KVLinks() []string { return linkPresets().Names() }

// UnknownLinkError is a link name that KVLinks does not list.
type UnknownLinkError struct{ Name string }

func (e *UnknownLinkError) Error() string {
	return fmt.Sprintf("unknown %q (want %s)", e.Name, linkPresets().Want())
}

// Validate returns an *UnknownLinkError when l is neither "" nor a preset.
func (l KVLink) Validate() error {
	if l != "" && !slices.Contains(KVLinks(), string(l)) {
		return &UnknownLinkError{Name: string(l)}
	}
	return nil
}

// Preset returns the link's numbers ("" is LinkRDMA).
func (l KVLink) Preset() (LinkPreset, error) {
	if l == "" {
		l = LinkRDMA
	}
	p, err := linkPresets().Lookup(string(l))
	if err != nil {
		return LinkPreset{}, &UnknownLinkError{Name: string(l)}
	}
	return p, nil
}

// MarshalText implements encoding.TextMarshaler: the name.
func (l KVLink) MarshalText() ([]byte, error) { return []byte(l), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *KVLink) UnmarshalText(b []byte) error {
	v := KVLink(b)
	if err := v.Validate(); err != nil {
		return err
	}
	*l = v
	return nil
}

// Enabled reports whether disaggregation is on: either pool has replicas.
func (d *Disaggregation) Enabled() bool { return d.Prefill.Replicas > 0 || d.Decode.Replicas > 0 }

// Resolve returns the transfer's bandwidth in bytes/s and latency in seconds:
// the preset's numbers where the settings leave them 0.
func (k KVTransfer) Resolve() (bytesPerS, latencyS float64, err error) {
	p, err := k.Link.Preset()
	if err != nil {
		return 0, 0, err
	}
	bw, lat := k.BandwidthGbps, k.LatencyUS
	if bw == 0 {
		bw = p.BandwidthGbps
	}
	if lat == 0 {
		lat = p.LatencyUS
	}
	return bw * 1e9 / 8, lat / 1e6, nil
}

// Keys of the disaggregation settings that errors name.
const (
	keyDisagg        = "disaggregation"
	keyKVBandwidth   = keyDisagg + ".kv_transfer.bandwidth_gbps"
	keyKVLatency     = keyDisagg + ".kv_transfer.latency_us"
	keyKVLink        = keyDisagg + ".kv_transfer.link"
	maxKVBandwidthGb = 1e6 // Gbit/s: a terabit link x 1000
	maxKVLatencyUS   = 1e6 // one second
)

// validate checks the disaggregation settings of d (a *FieldError).
func (d *Deployment) validateDisaggregation() error {
	g := &d.Disaggregation
	bad := func(key, format string, args ...any) error {
		return &FieldError{Key: key, Reason: fmt.Sprintf(format, args...)}
	}
	pools := []struct {
		name string
		p    *Pool
	}{{"prefill", &g.Prefill}, {"decode", &g.Decode}}
	for _, pl := range pools {
		key := keyDisagg + "." + pl.name
		if err := limits.IntIn(pl.p.Replicas, 0, limits.MaxReplicas); err != nil {
			return bad(key+".replicas", "%s", err)
		}
		if err := limits.IntIn(pl.p.TP, 0, limits.MaxTP); err != nil {
			return bad(key+".tp", "%s", err)
		}
		if err := pl.p.Router.Validate(); err != nil {
			return &FieldError{Key: key + ".router", Reason: err.Error(), Err: err}
		}
	}
	if err := g.KVTransfer.Link.Validate(); err != nil {
		return &FieldError{Key: keyKVLink, Reason: err.Error(), Err: err}
	}
	if bw := g.KVTransfer.BandwidthGbps; !(bw >= 0 && bw <= maxKVBandwidthGb) {
		return bad(keyKVBandwidth, "must be in [0, %g] Gbit/s (0: the link preset's), got %g", float64(maxKVBandwidthGb), bw)
	}
	if l := g.KVTransfer.LatencyUS; !(l >= 0 && l <= maxKVLatencyUS) || math.IsNaN(l) {
		return bad(keyKVLatency, "must be in [0, %g] µs (0: the link preset's), got %g", float64(maxKVLatencyUS), l)
	}
	if !g.Enabled() {
		return nil
	}
	for i, pl := range pools {
		if pl.p.Replicas == 0 {
			other := pools[1-i]
			return bad(keyDisagg+"."+pl.name+".replicas", "must be >= 1 when %s.%s.replicas is %d: a disaggregated deployment needs both pools", keyDisagg, other.name, other.p.Replicas)
		}
	}
	if d.DP > 1 {
		return bad("dp", "disaggregation runs dp 1 only, got %d", d.DP)
	}
	if d.Replicas > 1 {
		return bad("replicas", "must be 1 with disaggregation (the pools' replicas set the instances), got %d", d.Replicas)
	}
	return nil
}

// PoolDeployment is the deployment of one pool's instances: d with the
// pool's tp, gpu and router where set, its replicas, and disaggregation off.
func (d Deployment) PoolDeployment(p Pool) Deployment {
	out := d
	out.Disaggregation = Disaggregation{}
	out.Replicas = p.Replicas
	if p.TP > 0 {
		out.TP = p.TP
	}
	if p.GPU != "" {
		out.GPU = p.GPU
	}
	if p.Router != "" {
		out.Router = p.Router
	}
	return out
}
