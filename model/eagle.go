package model

import "fmt"

// hfDraftVocab reads an EAGLE-3 head's draft_vocab_size into
// Config.DraftVocabSize. EAGLE-3 heads (vllm/model_executor/models/
// llama_eagle3.py) build their LM head over draft_vocab_size tokens, with
// a draft-to-target id map, instead of the target's vocabulary; a config
// whose draft_vocab_size equals vocab_size keeps 0.
func hfDraftVocab(d hfDoc, cfg *Config) error {
	v, p, has, err := d.intKey("draft_vocab_size")
	if err != nil || !has || v == cfg.VocabSize {
		return err
	}
	if v <= 0 || v > cfg.VocabSize {
		return hfErr(p, "must be in [1, vocab_size = %d], got %d", cfg.VocabSize, v)
	}
	cfg.DraftVocabSize = v
	return nil
}

// validateDraftVocab checks DraftVocabSize: 0 or in [1, VocabSize].
func (c *Config) validateDraftVocab() error {
	if c.DraftVocabSize < 0 || c.DraftVocabSize > c.VocabSize {
		return fmt.Errorf("draft_vocab_size: must be 0 or in [1, vocab_size = %d], got %d", c.VocabSize, c.DraftVocabSize)
	}
	return nil
}
