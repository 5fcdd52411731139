package calibrate

import "fmt"

// ProfileYAML renders the fitted profile in the hardware/profiles/<gpu>.yaml
// schema, preceded by a comment with the profile's source and training
// error. hardware.ParseProfile reads it back.
func (r *ThroughputResult) ProfileYAML() ([]byte, error) {
	header := fmt.Sprintf("# %s efficiency profile fitted to model-level llama.cpp throughput.\n", r.GPU) +
		fmt.Sprintf("# Training median abs error: prefill %.1f%%, decode %.1f%% over %d rows.\n",
			r.TrainPrefillMedianAPE, r.TrainDecodeMedianAPE, len(r.Used)) +
		fmt.Sprintf("# Regenerate: sim calibrate --gpu %s --throughput ../shared/data/%s/measurements.csv --out hardware/profiles/%s.yaml --profile-only\n", r.GPU, r.GPU, r.GPU)
	return marshal(r.Profile, header)
}
