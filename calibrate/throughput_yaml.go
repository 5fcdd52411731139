package calibrate

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// ProfileYAML renders the fitted profile in the hardware/profiles/<gpu>.yaml
// schema, preceded by a comment with the profile's source and training
// error. hardware.ParseProfile reads it back.
func (r *ThroughputResult) ProfileYAML() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s efficiency profile fitted to model-level llama.cpp throughput.\n", r.GPU)
	fmt.Fprintf(&b, "# Training median abs error: prefill %.1f%%, decode %.1f%% over %d rows.\n",
		r.TrainPrefillMedianAPE, r.TrainDecodeMedianAPE, len(r.Used))
	fmt.Fprintf(&b, "# Regenerate: sim calibrate --gpu %s --throughput ../shared/data/%s/measurements.csv --out hardware/profiles/%s.yaml --profile-only\n", r.GPU, r.GPU, r.GPU)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(r.Profile); err != nil {
		return nil, fmt.Errorf("encoding profile: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
