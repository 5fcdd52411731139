package roofline

// prefillKeySum is the number of (query, key) pairs a causal prefill of
// qLen new tokens on top of cached tokens scores: new token i (0-based,
// absolute position cached+i) attends to cached+i+1 keys, or to window keys
// when window > 0 caps it:
//
//	sum_{j=cached+1}^{cached+qLen} min(j, window)
//
// evaluated in closed form (O(1)).
func prefillKeySum(qLen, cached, window int) float64 {
	if qLen <= 0 {
		return 0
	}
	q, c := float64(qLen), float64(cached)
	if window <= 0 || cached+qLen <= window {
		return q*c + q*(q+1)/2
	}
	w := float64(window)
	a, b := c+1, c+q // first and last attended-key counts before capping
	if a > w {
		return q * w
	}
	return (a+w)*(w-a+1)/2 + (b-w)*w
}

// prefillKVRead is the number of distinct cached+new token positions whose
// K and V a prefill chunk reads: cached+qLen, or with a window only the
// positions some new token can see, min(cached+qLen, window+qLen-1).
func prefillKVRead(qLen, cached, window int) float64 {
	if qLen <= 0 {
		return 0
	}
	n := cached + qLen
	if window > 0 && window+qLen-1 < n {
		n = window + qLen - 1
	}
	return float64(n)
}

// decodeKeys is the number of keys one decode query attends to: its KV
// length, capped by the window when window > 0.
func decodeKeys(kvLen, window int) int {
	if window > 0 && kvLen > window {
		return window
	}
	return kvLen
}

// prefillAttention prices a varlen prefill attention kernel from sums over
// its sequences: keySum (query-key pairs), kvRead (K/V token positions
// read), newTokens (queries, and K/V rows written).
func prefillAttention(keySum, kvRead, newTokens float64, heads, kvHeads, headDim int, kv, act Precision) Cost {
	h, kvh, d := float64(heads), float64(kvHeads), float64(headDim)
	return Cost{
		Name:             "attention_prefill",
		Kind:             KindAttentionPrefill,
		FLOPs:            4 * h * d * keySum,
		ActBytes:         2 * newTokens * h * d * act.Bits / 8,
		KVBytes:          2 * kvh * d * kv.Bits / 8 * (kvRead + newTokens),
		ComputePrecision: act.Compute,
	}
}

// decodeAttention prices a batched decode attention kernel from the sum of
// attended keys over its requests and the request count; it serves
// requests x kvHeads (request, KV head) pairs.
func decodeAttention(keySum float64, requests int, heads, kvHeads, headDim int, kv, act Precision) Cost {
	h, kvh, d := float64(heads), float64(kvHeads), float64(headDim)
	return Cost{
		Name:             "attention_decode",
		Kind:             KindAttentionDecode,
		FLOPs:            4 * h * d * keySum,
		ActBytes:         2 * float64(requests) * h * d * act.Bits / 8,
		KVBytes:          2 * keySum * kvh * d * kv.Bits / 8,
		ComputePrecision: act.Compute,
		Pairs:            requests * kvHeads,
	}
}

// AttentionPrefill is causal self-attention for batch sequences, each
// computing qLen new tokens on top of cached tokens already in the KV cache.
// New token i attends to A_i = cached+i+1 keys (min(A_i, window) when
// window > 0). Per sequence:
//
//	FLOPs    = 4 heads headDim sum_i A_i              (QK^T and PV, 2 each)
//	ActBytes = 2 qLen heads headDim act.Bits/8        (read Q, write O)
//	KVBytes  = 2 kvHeads headDim kv.Bits/8 (R + qLen) (read K,V of R tokens,
//	                                                  write the new K,V)
//
// where R = cached+qLen, or min(cached+qLen, window+qLen-1) with a window.
// The totals are batch times the per-sequence values.
func AttentionPrefill(batch, heads, kvHeads, headDim, qLen, cached int, kv, act Precision, window int) Cost {
	b := float64(batch)
	if batch <= 0 || qLen <= 0 {
		b = 0
	}
	return prefillAttention(
		b*prefillKeySum(qLen, cached, window),
		b*prefillKVRead(qLen, cached, window),
		b*float64(max(qLen, 0)),
		heads, kvHeads, headDim, kv, act)
}

// AttentionDecode is one batched decode attention kernel. Each request is
// costed from its own KV length L (including the new token; capped at
// window when window > 0), never from the batch mean:
//
//	FLOPs    = sum 4 heads headDim L
//	KVBytes  = sum 2 L kvHeads headDim kv.Bits/8   (K and V read)
//	ActBytes = requests * 2 heads headDim act.Bits/8 (read q, write o)
//
// The new token's K,V write is inside L's read and not counted twice.
// Complexity O(len(kvLens)).
func AttentionDecode(kvLens []int, heads, kvHeads, headDim int, kv, act Precision, window int) Cost {
	var sum float64
	for _, l := range kvLens {
		if l > 0 {
			sum += float64(decodeKeys(l, window))
		}
	}
	return decodeAttention(sum, len(kvLens), heads, kvHeads, headDim, kv, act)
}

// chunkedPrefix is sum_{p=0}^{n-1} ((p mod w) + 1): the query-key pairs of
// the first n positions under chunked local attention (Llama 4), where
// position p attends only to earlier positions of its own aligned chunk of
// w tokens.
func chunkedPrefix(n, w int) float64 {
	if n <= 0 {
		return 0
	}
	full, r := float64(n/w), float64(n%w)
	fw := float64(w)
	return full*fw*(fw+1)/2 + r*(r+1)/2
}

// chunkedKeySum is prefillKeySum for chunked local attention with chunk w.
func chunkedKeySum(qLen, cached, w int) float64 {
	if qLen <= 0 {
		return 0
	}
	return chunkedPrefix(cached+qLen, w) - chunkedPrefix(cached, w)
}

// chunkedKVRead is prefillKVRead for chunked local attention: positions
// from the start of the first new token's chunk to the last new token.
func chunkedKVRead(qLen, cached, w int) float64 {
	if qLen <= 0 {
		return 0
	}
	return float64(cached + qLen - (cached/w)*w)
}

// chunkedDecodeKeys is the keys a decode query at KV length kvLen (>= 1)
// attends to under chunked local attention: its position within its chunk.
func chunkedDecodeKeys(kvLen, w int) int {
	return kvLen - ((kvLen-1)/w)*w
}
