package observe

import (
	"math"
	"strings"

	"github.com/roofsim/roofsim/internal/mix"
	"github.com/roofsim/roofsim/workload"
)

// vocabulary returns common short English words, each a single token in
// the BPE vocabularies of current open models (Llama 3, Qwen, Mistral,
// GPT-2 style tokenizers) when preceded by a space. Prompts are made of
// them, so a prompt of n words is close to n tokens without a tokenizer.
func vocabulary() *[64]string {
	return &[64]string{
		"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
		"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
		"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
		"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
		"if", "more", "when", "will", "would", "who", "so", "no", "out", "up",
		"into", "do", "any", "time", "about", "than", "only", "other", "new", "some",
		"could", "these", "two", "may",
	}
}

// words appends n words of the content stream named key, from position
// from on. The same key always yields the same words, so requests that
// share a workload segment share their prompt text and a server's prefix
// cache sees the reuse the simulator models.
func words(b *strings.Builder, key uint64, from, n int) {
	vocab := vocabulary()
	for i := from; i < from+n; i++ {
		h := mix.SplitMix64(key ^ mix.SplitMix64(uint64(i)+0x9e3779b97f4a7c15))
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[h%uint64(len(vocab))])
	}
}

// promptText builds the prompt of r: the words of each shared segment in
// order, then words unique to the request, wordsPerToken words per
// requested token (rounded). seed separates the unique parts of different
// runs.
func promptText(r *workload.Request, seed uint64, wordsPerToken float64) string {
	scale := func(tokens int) int { return max(0, int(math.Round(float64(tokens)*wordsPerToken))) }
	var b strings.Builder
	used := 0
	for _, s := range r.Segments {
		words(&b, s.Key, 0, scale(s.Tokens))
		used += s.Tokens
	}
	if rest := r.PromptTokens - used; rest > 0 {
		words(&b, mix.SplitMix64(seed^0x6a09e667f3bcc909)^mix.SplitMix64(r.ID+1), 0, scale(rest))
	}
	if b.Len() == 0 {
		b.WriteString(vocabulary()[0])
	}
	return b.String()
}
