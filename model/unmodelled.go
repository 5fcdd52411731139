package model

import "fmt"

// hfUnmodelled lists the parts of a checkpoint that the config describes
// but the step model leaves out, one note each, for the run's notes
// (Config.Unmodelled): a vision or audio encoder (vision_config,
// audio_config) and multi-token-prediction layers (mtp_num_hidden_layers),
// which serving without speculative decoding does not run.
func hfUnmodelled(d hfDoc) ([]string, error) {
	var notes []string
	for _, key := range []string{"vision_config", "audio_config"} {
		if v, ok := d.top[key]; ok && v != nil {
			notes = append(notes, fmt.Sprintf("%s: the encoder is not modelled (its weights are not counted in memory and requests are priced as text only)", key))
		}
	}
	if n, p, has, err := d.intKey("mtp_num_hidden_layers"); err != nil {
		return nil, err
	} else if has && n > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d multi-token-prediction layer(s) not modelled (not run without speculative decoding; weights not counted)", p, n))
	}
	return notes, nil
}
