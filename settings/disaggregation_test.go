package settings

import (
	"errors"
	"testing"
)

// The pools' settings get flags of their own (no clash with tp, gpu,
// replicas and router), and the link's numbers come from its preset unless
// given: rdma 400 Gbit/s = 5e10 B/s and 50 µs, nvlink 3600 Gbit/s = 4.5e11
// B/s and 10 µs.
func TestDisaggregationSettings(t *testing.T) {
	flags := map[string]string{}
	for _, s := range DeploymentSettings() {
		if prev, dup := flags[s.Flag()]; dup {
			t.Errorf("%s and %s share --%s", prev, s.Key, s.Flag())
		}
		flags[s.Flag()] = s.Key
	}
	for flag, key := range map[string]string{"prefill-replicas": "disaggregation.prefill.replicas", "decode-gpu": "disaggregation.decode.gpu",
		"kv-bandwidth-gbps": "disaggregation.kv_transfer.bandwidth_gbps", "kv-link": "disaggregation.kv_transfer.link"} {
		if flags[flag] != key {
			t.Errorf("--%s sets %q, want %s", flag, flags[flag], key)
		}
	}
	for _, c := range []struct {
		k       KVTransfer
		bw, lat float64
	}{
		{KVTransfer{}, 5e10, 50e-6},
		{KVTransfer{Link: LinkNVLink}, 4.5e11, 10e-6},
		{KVTransfer{Link: LinkRDMA, BandwidthGbps: 100, LatencyUS: 7}, 1.25e10, 7e-6},
	} {
		bw, lat, err := c.k.Resolve()
		if err != nil || bw != c.bw || lat != c.lat {
			t.Errorf("%+v: %g B/s, %g s, %v; want %g, %g", c.k, bw, lat, err, c.bw, c.lat)
		}
	}
}

// Disaggregation is off by default; one pool without replicas, a negative
// bandwidth, an unknown link and dp or replicas beside the pools are
// errors naming the setting.
func TestDisaggregationValidate(t *testing.T) {
	d := DefaultDeployment()
	if d.Disaggregation.Enabled() || d.Validate() != nil {
		t.Fatal("the default deployment is disaggregated or invalid")
	}
	for _, c := range []struct {
		key    string
		mutate func(d *Deployment)
	}{
		{"disaggregation.decode.replicas", func(d *Deployment) { d.Disaggregation.Prefill.Replicas = 1 }},
		{"disaggregation.prefill.replicas", func(d *Deployment) { d.Disaggregation.Decode.Replicas = 2 }},
		{"disaggregation.kv_transfer.bandwidth_gbps", func(d *Deployment) { d.Disaggregation.KVTransfer.BandwidthGbps = -1 }},
		{"disaggregation.kv_transfer.latency_us", func(d *Deployment) { d.Disaggregation.KVTransfer.LatencyUS = -5 }},
		{"disaggregation.kv_transfer.link", func(d *Deployment) { d.Disaggregation.KVTransfer.Link = "carrier-pigeon" }},
		{"disaggregation.decode.tp", func(d *Deployment) { d.Disaggregation.Decode.TP = -1 }},
		{"dp", func(d *Deployment) {
			d.Disaggregation.Prefill.Replicas, d.Disaggregation.Decode.Replicas, d.DP = 1, 1, 2
		}},
		{"replicas", func(d *Deployment) {
			d.Disaggregation.Prefill.Replicas, d.Disaggregation.Decode.Replicas, d.Replicas = 1, 1, 3
		}},
	} {
		d := DefaultDeployment()
		c.mutate(&d)
		var fe *FieldError
		if err := d.Validate(); !errors.As(err, &fe) || fe.Key != c.key {
			t.Errorf("%s: %v", c.key, err)
		}
	}
	d.Disaggregation.Prefill.Replicas, d.Disaggregation.Decode.Replicas = 1, 3
	if err := d.Validate(); err != nil || !d.Disaggregation.Enabled() {
		t.Fatalf("1P3D: %v", err)
	}
	p := d.PoolDeployment(Pool{Replicas: 3, TP: 4, GPU: "h200"})
	if p.Replicas != 3 || p.TP != 4 || p.GPU != "h200" || p.Router != d.Router || p.Disaggregation.Enabled() {
		t.Fatalf("pool deployment %+v", p)
	}
}
