package model

import "fmt"

// hfMTPHiddenNote names multi-token-prediction layers declared as
// mtp_num_hidden_layers (Qwen3.5, Qwen3-Next), which serving without
// speculative decoding does not run and whose weights are not counted, for
// Config.Notes; "" when the config has none. (DeepSeek's
// num_nextn_predict_layers is Config.MTPLayers instead.)
func hfMTPHiddenNote(d hfDoc) (string, error) {
	n, p, has, err := d.intKey("mtp_num_hidden_layers")
	if err != nil || !has || n <= 0 {
		return "", err
	}
	return fmt.Sprintf("%s: %d multi-token-prediction layer(s) not modelled (not run without speculative decoding; weights not counted)", p, n), nil
}
