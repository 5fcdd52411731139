package calibrate

import (
	"bytes"
	"fmt"

	"github.com/roofsim/roofsim/hardware"
	"go.yaml.in/yaml/v3"
)

// MarshalProfile writes p as a profile YAML file (the format of
// hardware/profiles/<gpu>.yaml, read by hardware.ParseProfile).
func MarshalProfile(p *hardware.Profile) ([]byte, error) {
	return marshal(p, "# Efficiency profile written by `sim calibrate --profile-only`.\n")
}

// MarshalGPU writes g, with its profile embedded, as a GPU YAML file that
// hardware.ParseGPU (and `--gpu file.yaml`) accepts.
func MarshalGPU(g *hardware.GPU) ([]byte, error) {
	return marshal(g, "# GPU description with a calibrated profile, written by `sim calibrate`.\n")
}

// MarshalProfileWithHeader writes p as a profile YAML file preceded by
// header, which must be YAML comment lines ending in a newline.
func MarshalProfileWithHeader(p *hardware.Profile, header string) ([]byte, error) {
	return marshal(p, header)
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
