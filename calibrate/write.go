package calibrate

import (
	"bytes"
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"go.yaml.in/yaml/v3"
)

// MarshalProfile writes p as a profile YAML file (the format of
// hardware/profiles/<gpu>.yaml, read by hardware.ParseProfile). A GPU
// profile file holds no engine terms (hardware.EngineTermKeys) nor
// kernel-path terms (hardware.KernelPathTermKeys): they are the engine
// profile's (MarshalEngineProfile), and the catalog takes them from there;
// p's are left out.
func MarshalProfile(p *hardware.Profile) ([]byte, error) {
	return marshalGPUProfile(p, "# Efficiency profile written by `sim calibrate --profile-only`.\n")
}

// MarshalGPU writes g, with its profile embedded, as a GPU YAML file that
// hardware.ParseGPU (and `--gpu file.yaml`) accepts.
func MarshalGPU(g *hardware.GPU) ([]byte, error) {
	return marshal(g, "# GPU description with a calibrated profile, written by `sim calibrate`.\n")
}

// MarshalProfileWithHeader writes p as a profile YAML file preceded by
// header, which must be YAML comment lines ending in a newline.
// Like MarshalProfile, it leaves out the engine terms.
func MarshalProfileWithHeader(p *hardware.Profile, header string) ([]byte, error) {
	return marshalGPUProfile(p, header)
}

// marshalGPUProfile writes p less its engine terms.
func marshalGPUProfile(p *hardware.Profile, header string) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(p); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	drop := map[string]bool{}
	for _, k := range append(hardware.EngineTermKeys(), hardware.KernelPathTermKeys()...) {
		drop[k] = true
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !drop[n.Content[i].Value] {
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
	}
	n.Content = kept
	return marshal(&n, header)
}

// MarshalEngineProfile writes e as an engine profile file (the format of
// engine/profiles/<engine>-<release>.yaml, read by
// hardware.ParseEngineProfile).
func MarshalEngineProfile(e *hardware.EngineProfile) ([]byte, error) {
	return marshal(e, "# Engine profile written by `sim calibrate`; engine/profiles/README.md explains it.\n")
}

func marshal(v any, header string) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	return buf.Bytes(), nil
}
