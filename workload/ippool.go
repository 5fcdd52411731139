package workload

import "math"

// ipPromptPool sets c's prompts for single-turn shared_prefix data.
// inference-perf builds groups x users prompts once, each a system prompt of
// its group followed by its own question, shuffles them and sends request n
// the prompt n mod (groups x users) (datagen/shared_prefix_datagen.py,
// _generate_prompts and get_request), so every prompt is sent again, word for
// word, once per groups x users requests. With fixed lengths roofsim sends the
// same pool: groups x users prefixes of system + question - 1 tokens, each
// followed by one token of its own. A repeated prompt is then a prefix-cache
// hit on all but its last token, as in vLLM, which always computes the last
// prompt token. With a length distribution the questions of the pool differ in
// length, which a prefix cannot express: roofsim then shares the system
// prompts only and draws each question afresh.
func ipPromptPool(c *Client, groups, users int, sys, q LengthDist, note func(string, ...any)) {
	pool := groups * users
	note("data.shared_prefix: inference-perf releases before kubernetes-sigs/inference-perf#383 (May 2026) make prompts by decoding random token ids to text, which the server tokenizes again, so the served prompts run a few percent longer than configured; roofsim sends the configured lengths")
	if sys.Dist == DistConstant && q.Dist == DistConstant && sys.Value+q.Value >= 2 {
		c.Prefix = &Prefix{Groups: pool, Tokens: sys.Value + q.Value - 1}
		c.PromptTokens = LengthDist{Dist: DistConstant, Value: 1}
		note("data.shared_prefix: inference-perf cycles through %d fixed prompts (%d system prompts x %d questions) of %d tokens in a shuffled order; roofsim picks one of the same %d prompts at random for each request, and the first pass does not share the %d-token system prompts between a group's prompts", pool, groups, users, sys.Value+q.Value, pool, sys.Value)
		return
	}
	c.Prefix = &Prefix{Groups: groups, Tokens: ipSystemTokens(sys, note)}
	c.PromptTokens = q
	note("data.shared_prefix: inference-perf cycles through %d fixed prompts (%d system prompts x %d questions), so questions repeat after that many requests; with question lengths drawn from a distribution roofsim draws a fresh question each time and picks the system prompt at random", pool, groups, users)
}

// ipSystemTokens is the system prompt length roofsim gives every group: the
// fixed length, or the mean of a distribution (inference-perf draws one length
// per system prompt), with a note.
func ipSystemTokens(sys LengthDist, note func(string, ...any)) int {
	if sys.Dist == DistConstant {
		return sys.Value
	}
	n := max(1, int(math.Round(sys.meanValue())))
	note("data.shared_prefix.system_prompt_len: inference-perf draws one length per system prompt; roofsim gives every group the mean, %d tokens", n)
	return n
}
