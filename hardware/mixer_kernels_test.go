package hardware

import (
	"errors"
	"strings"
	"testing"
)

func TestMixerKernelsValidateAndClone(t *testing.T) {
	p := DefaultProfile()
	e := OpEfficiency{Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.8}, LaunchUS: 3}
	p.MixerKernels = map[MixerKernel]OpEfficiency{MixerMLADecode: e}
	if err := p.Validate(); err != nil {
		t.Fatalf("valid mixer kernels rejected: %v", err)
	}
	if got, ok := p.Mixer(MixerMLADecode); !ok || got != e {
		t.Errorf("Mixer(mla_decode) = %+v, %v; want %+v, true", got, ok, e)
	}
	if _, ok := p.Mixer(MixerGDNDecode); ok {
		t.Error("Mixer(gdn_decode) present in a profile without it")
	}
	c := p.Clone()
	c.MixerKernels[MixerGDNDecode] = e
	if _, ok := p.MixerKernels[MixerGDNDecode]; ok {
		t.Error("Clone shares the mixer kernels map")
	}

	p.MixerKernels = map[MixerKernel]OpEfficiency{"mla_prefil": e}
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "mixer_kernels") {
		t.Fatalf("unknown mixer kernel: got %v, want an error naming mixer_kernels", err)
	}
	p.MixerKernels = map[MixerKernel]OpEfficiency{MixerGDNPrefill: {Compute: Curve{Max: 1.5}}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "mixer_kernels.gdn_prefill") {
		t.Fatalf("efficiency above 1: got %v, want an error naming mixer_kernels.gdn_prefill", err)
	}
	var u *UnknownMixerKernelError
	if _, err := ParseMixerKernel("mamba"); !errors.As(err, &u) || u.Name != "mamba" {
		t.Errorf("ParseMixerKernel(mamba) = %v, want *UnknownMixerKernelError", err)
	}
	for _, k := range MixerKernels() {
		if got, err := ParseMixerKernel(string(k)); err != nil || got != k {
			t.Errorf("ParseMixerKernel(%s) = %v, %v", k, got, err)
		}
	}
}

func TestMixerKernelsYAMLRoundTrip(t *testing.T) {
	doc := []byte("calibrated: true\nmixer_kernels:\n  mla_decode:\n    compute: {max: 0.4}\n    memory: {max: 0.9, half: 1e6}\n    launch_us: 12\n")
	p, err := ParseProfile(doc, "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := p.Mixer(MixerMLADecode)
	if !ok || e.Compute.Max != 0.4 || e.Memory.Half != 1e6 || e.LaunchUS != 12 {
		t.Fatalf("parsed mla_decode = %+v, %v", e, ok)
	}
	if _, err := ParseProfile([]byte("calibrated: true\nmixer_kernels:\n  gdn: {compute: {max: 0.4}, memory: {max: 0.5}}\n"), "t.yaml"); err == nil || !strings.Contains(err.Error(), "mixer_kernels") {
		t.Fatalf("unknown key in YAML: got %v, want an error naming mixer_kernels", err)
	}
}
