package main

import (
	"fmt"

	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/sim"
)

// modelDetail is `sim models --model M --json`: one model's derived
// architecture. Bytes are at the resolved weight and KV precisions.
type modelDetail struct {
	Name   string `json:"name"`
	Family string `json:"family,omitempty"`
	// Layers lists the layers by kind (model.LayerGroups), each with its KV
	// bytes per token and state bytes per request on one GPU at TP.
	Layers []layerRow `json:"layers"`
	// ParamsTotal and ParamsActive count the served model (elements);
	// ParamsMTP the multi-token-prediction modules, which neither includes.
	ParamsTotal  float64 `json:"params_total"`
	ParamsActive float64 `json:"params_active"`
	ParamsMTP    float64 `json:"params_mtp"`
	TP           int     `json:"tp"`
	WeightDType  string  `json:"weight_dtype"`
	KVDType      string  `json:"kv_dtype"`
	// WeightBytesPerGPU is one GPU's weights at TP; KVBytesPerTokenPerGPU
	// one token's KV cache on one GPU (all layers) and KVBytesPerToken on
	// all TP GPUs together; StateBytesPerRequest a request's fixed-size
	// state on one GPU.
	WeightBytesPerGPU     float64 `json:"weight_bytes_per_gpu"`
	KVBytesPerToken       float64 `json:"kv_bytes_per_token"`
	KVBytesPerTokenPerGPU float64 `json:"kv_bytes_per_token_per_gpu"`
	StateBytesPerRequest  float64 `json:"state_bytes_per_request"`
	// For a model with sliding-window and full attention layers (and no
	// state layers): the KV bytes one request of MaxModelLen tokens may
	// take on one GPU as vLLM's hybrid manager lays the cache out (window
	// blocks bounded by the window and a step's tokens;
	// sim.SlidingCacheLayout.MaxRequestBlocks), and the same if every layer
	// kept the whole context. Zero otherwise.
	MaxModelLen                      int     `json:"max_model_len,omitempty"`
	KVBytesPerMaxLenRequestPerGPU    float64 `json:"kv_bytes_per_max_len_request_per_gpu,omitempty"`
	KVBytesPerMaxLenRequestFullCache float64 `json:"kv_bytes_per_max_len_request_full_cache_per_gpu,omitempty"`
	// KVLayoutNote says, for a model with chunked local attention (Llama
	// 4), which engine releases lay its cache out in groups
	// (engine.Engine.ChunkedLocalHybridKV); "" for any other model.
	KVLayoutNote string `json:"kv_layout_note,omitempty"`
	// Quantization says where a quantised checkpoint's precisions came from.
	Quantization string `json:"quantization,omitempty"`
	// Notes name what is not priced, or priced in part.
	Notes []string `json:"notes,omitempty"`
	// Config is the architecture as loaded.
	Config model.Config `json:"config"`
}

// layerRow is one model.LayerGroup with its bytes on one GPU.
type layerRow struct {
	model.LayerGroup
	KVBytesPerTokenPerGPU      float64 `json:"kv_bytes_per_token_per_gpu"`
	StateBytesPerRequestPerGPU float64 `json:"state_bytes_per_request_per_gpu"`
}

// runModelDetail prints one model's derived architecture. Its bytes come
// from the step model on a part that supports every precision (B200), so
// they do not depend on a GPU.
func runModelDetail(s streams, opts *modelsOptions) error {
	cmd := opts.cmd
	sp, err := loadSpec(cmd, "")
	if err != nil {
		return settingError(cmd, err)
	}
	m, err := model.Resolve(sp.Model)
	if err != nil {
		return fmt.Errorf("%s: %w", settingOrigin(cmd, "model"), err)
	}
	ref, err := hardware.Lookup("b200")
	if err != nil {
		return err
	}
	step, err := roofline.NewStepModel(m, ref, roofline.StepOptions{TP: sp.TP, WeightDType: string(sp.Weights), KVDType: string(sp.KVCacheDType)})
	if err != nil {
		return err
	}
	d := describeModel(m, step)
	d.slidingRequest(m, step, sp.Serving.Config, sp.Engine)
	if opts.JSON {
		return writeJSON(s.out, d)
	}
	fmt.Fprintf(s.out, "%s (%s): %d layers, hidden %d, vocab %d\n", d.Name, d.Family, m.NumLayers, m.HiddenSize, m.VocabSize)
	fmt.Fprintf(s.out, "params %.2fB total, %.2fB active per token", d.ParamsTotal/1e9, d.ParamsActive/1e9)
	if d.ParamsMTP > 0 {
		fmt.Fprintf(s.out, ", %.2fB in %d MTP module(s) (not counted)", d.ParamsMTP/1e9, m.MTPLayers)
	}
	fmt.Fprintln(s.out)
	if d.Quantization != "" {
		fmt.Fprintf(s.out, "checkpoint quantisation: %s\n", d.Quantization)
	}
	fmt.Fprintf(s.out, "tp %d, weights %s, kv %s: weights %.2f GB per GPU, KV %.0f bytes per token per GPU (%.0f on all GPUs), state %.0f bytes per request per GPU\n",
		d.TP, d.WeightDType, d.KVDType, d.WeightBytesPerGPU/1e9, d.KVBytesPerTokenPerGPU, d.KVBytesPerToken, d.StateBytesPerRequest)
	if d.KVBytesPerMaxLenRequestPerGPU > 0 {
		fmt.Fprintf(s.out, "KV of one request of max_model_len %d, vLLM's hybrid layout: %.2f GiB per GPU (%.2f GiB if every layer kept the whole context)\n",
			d.MaxModelLen, d.KVBytesPerMaxLenRequestPerGPU/(1<<30), d.KVBytesPerMaxLenRequestFullCache/(1<<30))
	}
	if d.KVLayoutNote != "" {
		fmt.Fprintf(s.out, "KV layout: %s\n", d.KVLayoutNote)
	}
	tw := newTable(s.out)
	fmt.Fprintln(tw, "LAYER KIND\tCOUNT\tKV ELEMS/TOKEN/LAYER\tWINDOW\tKV BYTES/TOKEN/GPU\tSTATE BYTES/REQUEST/GPU")
	for _, l := range d.Layers {
		win := "-"
		if l.WindowTokens > 0 {
			win = fmt.Sprint(l.WindowTokens)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.0f\t%.0f\n", l.Kind, l.Count, l.KVElementsPerToken, win, l.KVBytesPerTokenPerGPU, l.StateBytesPerRequestPerGPU)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range d.Notes {
		fmt.Fprintf(s.out, "note: %s\n", n)
	}
	return nil
}

// describeModel assembles modelDetail from the model and its step model.
func describeModel(m *model.Config, step *roofline.StepModel) modelDetail {
	p := m.Params()
	o := step.Options()
	d := modelDetail{Name: m.Name, Family: m.Family, ParamsTotal: p.Total, ParamsActive: p.ActivePerToken,
		ParamsMTP: m.MTPParams(), TP: o.TP, WeightDType: o.WeightDType, KVDType: o.KVDType,
		WeightBytesPerGPU: step.WeightBytesPerGPU(), KVBytesPerTokenPerGPU: step.KVBytesPerTokenPerGPU(),
		Notes: m.PricingNotes(), Config: m.Clone()}
	if o.WeightDType == "" {
		d.WeightDType = o.WeightMix
	}
	if m.Quant != nil {
		d.Quantization = m.Quant.String()
	}
	// Per GPU, a layer kind's share of the step model's per-token KV bytes
	// is its share of the elements: the split by TP is the same for every
	// attention layer.
	var elems float64
	groups := m.LayerGroups()
	for _, g := range groups {
		elems += float64(g.Count * g.KVElementsPerToken)
	}
	for _, g := range groups {
		r := layerRow{LayerGroup: g}
		if elems > 0 {
			r.KVBytesPerTokenPerGPU = d.KVBytesPerTokenPerGPU * float64(g.Count*g.KVElementsPerToken) / elems
		}
		switch g.Kind {
		case model.KindLinearGDN:
			r.StateBytesPerRequestPerGPU = step.StateBytesPerRequestPerGPUOf(model.MixerGDN)
		case model.KindMamba2:
			r.StateBytesPerRequestPerGPU = step.StateBytesPerRequestPerGPUOf(model.MixerMamba2)
		}
		d.Layers = append(d.Layers, r)
	}
	d.StateBytesPerRequest = step.StateBytesPerRequestPerGPU()
	d.KVBytesPerToken = d.KVBytesPerTokenPerGPU * float64(o.TP)
	return d
}

// slidingRequest fills the max_model_len request's KV bytes of a model
// with sliding-window (or chunked local) and full attention layers and no
// state layers, as sim.Prepare lays its cache out, with sc's block size,
// max_model_len (0: the model's context) and max_num_batched_tokens; it
// leaves d alone for any other model. For chunked local attention it also
// sets KVLayoutNote, and with an engine release eng that keeps such a
// model's cache at full context it gives only the note.
func (d *modelDetail) slidingRequest(m *model.Config, step *roofline.StepModel, sc scheduler.Config, eng engines.Engine) {
	if step.StateBytesPerRequestPerGPU() > 0 {
		return
	}
	kv := step.SlidingKV()
	if kv.Chunked && kv.FullLayers > 0 {
		if on, src := eng.ChunkedLocalHybridKV(""); !eng.IsZero() && !on {
			d.KVLayoutNote = fmt.Sprintf("%s keeps the whole context in every layer (%s)", eng, src)
			return
		} else if on {
			d.KVLayoutNote = fmt.Sprintf("chunked local attention groups as %s lays them out (%s)", eng, src)
		} else {
			d.KVLayoutNote = "chunked local attention groups as vLLM lays them out by default from 0.14.0 (vLLM PR #29627); earlier releases, and eagle, eagle3 or mtp speculation, keep the whole context in every layer (vllm/config/vllm.py)"
		}
	}
	l, err := sim.NewSlidingCacheLayout(kv, sc.BlockSize)
	if err != nil {
		return // not a sliding-window model
	}
	d.MaxModelLen = sc.MaxModelLen
	if d.MaxModelLen == 0 {
		d.MaxModelLen = m.MaxPositionEmbeddings
	}
	d.KVBytesPerMaxLenRequestPerGPU = float64(l.MaxRequestBlocks(d.MaxModelLen, sc.MaxNumBatchedTokens)) * l.GroupBlockBytes()
	d.KVBytesPerMaxLenRequestFullCache = float64(d.MaxModelLen) * d.KVBytesPerTokenPerGPU
}
