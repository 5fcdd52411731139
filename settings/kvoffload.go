package settings

import "fmt"

// Bounds of the KV offload settings: a CPU tier of at most 1 PiB per
// instance, a host link between 0.01 GB/s and 10 TB/s.
const (
	maxKVOffloadCPUGiB        = 1 << 20
	minKVOffloadBandwidthGBps = 0.01
	maxKVOffloadBandwidthGBps = 1e4
)

// DefaultKVOffloadBandwidthGBps is the host link bandwidth, in GB/s per GPU,
// that serving.kv_offload.bandwidth_gbps 0 stands for: an assumed sustained
// rate of a PCIe x16 link (Gen5 peaks at 64 GB/s per direction, Gen4 at 32)
// for copies of many KV blocks, not a measured one.
const DefaultKVOffloadBandwidthGBps = 25.0

// LinkGBps is the bandwidth in use: BandwidthGBps, or the default for 0.
func (o KVOffload) LinkGBps() float64 {
	if o.BandwidthGBps == 0 {
		return DefaultKVOffloadBandwidthGBps
	}
	return o.BandwidthGBps
}

// validate checks the CPU tier's settings; caching is
// serving.enable_prefix_caching, which the tier needs (it holds prefix-cache
// blocks, found by their content hashes).
func (o *KVOffload) validate(caching bool) error {
	bad := func(key, format string, args ...any) error {
		return &FieldError{Key: "serving.kv_offload." + key, Reason: fmt.Sprintf(format, args...)}
	}
	if !(o.CPUGiB >= 0 && o.CPUGiB <= maxKVOffloadCPUGiB) {
		return bad("cpu_gib", "must be in [0, %d], got %g", maxKVOffloadCPUGiB, o.CPUGiB)
	}
	if b := o.BandwidthGBps; b != 0 && !(b >= minKVOffloadBandwidthGBps && b <= maxKVOffloadBandwidthGBps) {
		return bad("bandwidth_gbps", "must be 0 (the default, %g) or in [%g, %g], got %g", DefaultKVOffloadBandwidthGBps, minKVOffloadBandwidthGBps, float64(maxKVOffloadBandwidthGBps), b)
	}
	if o.CPUGiB > 0 && !caching {
		return bad("cpu_gib", "needs serving.enable_prefix_caching (the CPU tier holds prefix-cache blocks)")
	}
	return nil
}
