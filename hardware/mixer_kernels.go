package hardware

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MixerKernel names one token-mixer kernel family whose efficiency a
// profile may carry from the engine release's own kernel tables
// (Profile.MixerKernels): multi-head latent attention's prefill and decode
// kernels and its absorbed per-head matmuls, Gated DeltaNet's chunked
// prefill scan and recurrent decode update, and DeepSeek sparse
// attention's indexer and sparse MLA kernels. A family the profile lacks is
// priced from first principles (the roofline with the efficiency of the
// kernel that works alike; package roofline says which).
type MixerKernel string

// The mixer kernel families.
const (
	// MixerMLAPrefill is the expanded (compute-friendly) MLA prefill
	// attention, at the activations' peak.
	MixerMLAPrefill MixerKernel = "mla_prefill"
	// MixerMLADecode is the absorbed MLA decode kernel over the cached
	// latents, at the activations' peak.
	MixerMLADecode MixerKernel = "mla_decode"
	// MixerMLABMM is the absorbed path's 16-bit per-head batched matmuls
	// (q_nope x W_UK, latent output x W_UV).
	MixerMLABMM MixerKernel = "mla_bmm"
	// MixerGDNPrefill is Gated DeltaNet's chunked delta-rule scan.
	MixerGDNPrefill MixerKernel = "gdn_prefill"
	// MixerGDNDecode is Gated DeltaNet's per-token recurrent state update.
	MixerGDNDecode MixerKernel = "gdn_decode"
	// MixerDSAPrefill is DeepSeek sparse attention's sparse MLA kernel on
	// prefill tokens (each query over at most index_topk gathered
	// latents), at the activations' peak.
	MixerDSAPrefill MixerKernel = "dsa_prefill"
	// MixerDSADecode is the sparse MLA kernel on decode tokens, at the
	// activations' peak.
	MixerDSADecode MixerKernel = "dsa_decode"
	// MixerDSAIndexerPrefill is the lightning indexer's fp8 MQA logits of
	// prefill queries against every visible cached key and the top-k over
	// them, at the fp8 peak.
	MixerDSAIndexerPrefill MixerKernel = "dsa_indexer_prefill"
	// MixerDSAIndexerDecode is the indexer's paged fp8 MQA logits of decode
	// queries and their top-k, at the fp8 peak.
	MixerDSAIndexerDecode MixerKernel = "dsa_indexer_decode"
)

// MixerKernels returns every mixer kernel family, in a fixed order.
func MixerKernels() []MixerKernel {
	return []MixerKernel{MixerMLAPrefill, MixerMLADecode, MixerMLABMM, MixerGDNPrefill, MixerGDNDecode,
		MixerDSAPrefill, MixerDSADecode, MixerDSAIndexerPrefill, MixerDSAIndexerDecode}
}

// UnknownMixerKernelError is a mixer kernel name outside MixerKernels.
type UnknownMixerKernelError struct{ Name string }

func (e *UnknownMixerKernelError) Error() string {
	names := make([]string, 0, 9)
	for _, k := range MixerKernels() {
		names = append(names, string(k))
	}
	return fmt.Sprintf("unknown mixer kernel %q (known: %s)", e.Name, strings.Join(names, ", "))
}

// ParseMixerKernel reads a mixer kernel name; an
// *UnknownMixerKernelError when it is none of MixerKernels.
func ParseMixerKernel(s string) (MixerKernel, error) {
	if slices.Contains(MixerKernels(), MixerKernel(s)) {
		return MixerKernel(s), nil
	}
	return "", &UnknownMixerKernelError{Name: s}
}

// Mixer returns the profile's fitted efficiency of kernel family k and
// whether it has one (false: price it from first principles).
func (p *Profile) Mixer(k MixerKernel) (OpEfficiency, bool) {
	e, ok := p.MixerKernels[k]
	return e, ok
}

// validateMixers checks the names and efficiencies of p.MixerKernels.
func (p *Profile) validateMixers() *FieldError {
	for _, k := range slices.Sorted(maps.Keys(p.MixerKernels)) {
		if _, err := ParseMixerKernel(string(k)); err != nil {
			return fieldErr("mixer_kernels", err.Error())
		}
		if err := p.MixerKernels[k].validate("mixer_kernels." + string(k)); err != nil {
			return err
		}
	}
	return nil
}
