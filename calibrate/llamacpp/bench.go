package llamacpp

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/roofline"
)

// The llama.cpp builds fitted together by default: the ggml-org benches.
const (
	DefaultMinBuild = 6989
	DefaultMaxBuild = 7941
)

// Bench is a measurements file as a throughput.Source: its llama.cpp
// prefill and decode rows of builds [MinBuild, MaxBuild] (0: the defaults)
// are the points; its bandwidth probe and cuBLAS BF16 GEMM rows set the
// prior.
type Bench struct {
	// File names the data file in profiles and reports.
	File string
	// SHA256 is the hex SHA-256 of the file as read ("" when the rows did
	// not come from a file).
	SHA256 string
	Rows   []Row
	// MinBuild and MaxBuild bound the llama.cpp build numbers fitted
	// together (inclusive); 0 means DefaultMinBuild and DefaultMaxBuild.
	MinBuild, MaxBuild int
}

var _ throughput.Source = (*Bench)(nil)

// Load reads path into a Bench of the default builds.
func Load(path string) (*Bench, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, fmt.Errorf("reading throughput rows: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a Bench of the default builds from r; name labels errors and is
// recorded as the Bench's file.
func Read(r io.Reader, name string) (*Bench, error) {
	d := hardware.NewDigest(r)
	rows, err := ParseRows(d, name)
	if err != nil {
		return nil, err
	}
	sum, err := d.Sum()
	if err != nil {
		return nil, fmt.Errorf("reading throughput rows: %w", err)
	}
	return &Bench{File: name, SHA256: sum, Rows: rows}, nil
}

func (b *Bench) builds() (int, int) {
	lo, hi := b.MinBuild, b.MaxBuild
	if lo == 0 {
		lo = DefaultMinBuild
	}
	if hi == 0 {
		hi = DefaultMaxBuild
	}
	return lo, hi
}

// Points implements throughput.Source with Select over the build range.
func (b *Bench) Points() ([]throughput.Point, []throughput.Excluded) {
	lo, hi := b.builds()
	return Select(b.Rows, lo, hi)
}

// Provenance implements throughput.Source.
func (b *Bench) Provenance() throughput.Provenance {
	lo, hi := b.builds()
	return throughput.Provenance{File: b.File, SHA256: b.SHA256, Rows: len(b.Rows),
		Engine:    fmt.Sprintf("llama.cpp b%d-b%d (CUDA, flash attention)", lo, hi),
		Selection: fmt.Sprintf("llama.cpp prefill/decode rows of builds b%d..b%d", lo, hi)}
}

// Prior implements throughput.Source: the memory max is the measured
// bandwidth of the (last) bandwidth probe row over g's nominal bandwidth,
// and the GEMM compute max the best cuBLAS BF16 GEMM row over g's bf16
// peak, each capped at 0.99.
func (b *Bench) Prior(g *hardware.GPU) throughput.Prior {
	var pr throughput.Prior
	for _, r := range b.Rows {
		if r.Kind == "bandwidth" && r.Unit == "GB/s" && g.MemoryBandwidthGBps > 0 {
			pr.MemoryMax = math.Min(r.Value/g.MemoryBandwidthGBps, 0.99)
			pr.Notes = append(pr.Notes, fmt.Sprintf("memory max prior %.3f from line %d (%.0f GB/s of %.0f)", pr.MemoryMax, r.Line, r.Value, g.MemoryBandwidthGBps))
		}
	}
	if pk, ok := g.PeakFLOPS("bf16"); ok {
		best := 0.0
		for _, r := range b.Rows {
			if r.Kind == "gemm" && r.Unit == "TFLOPS" && strings.Contains(r.Engine, "cuBLAS") &&
				strings.HasPrefix(strings.ToUpper(r.WeightFormat), "BF16") && r.Value > best {
				best = r.Value
			}
		}
		if best > 0 {
			pr.GEMMMax = math.Min(best*1e12/pk, 0.99)
			pr.Notes = append(pr.Notes, fmt.Sprintf("gemm compute max prior %.3f from the best BF16 GEMM row (%.1f TFLOPS)", pr.GEMMMax, best))
		}
	}
	return pr
}

// Select splits rows into the points a llama.cpp fit of builds [lo, hi]
// uses and the rows it excludes, with reasons. Used rows are prefill or
// decode rows in tok/s, from llama.cpp with a stated build in range,
// first-hand (not SECONDARY or DERIVED), whose model and format map.
// Other engines (vLLM, SGLang, TensorRT-LLM, Ollama) run other kernels and
// are excluded; kernel rows (gemm, gemv, bandwidth) only set priors.
func Select(rows []Row, lo, hi int) (used []throughput.Point, excluded []throughput.Excluded) {
	// Rows repeat a few (model, format) pairs; each is mapped once (the
	// catalog lookup parses the embedded catalog) and every row gets its own
	// copy of the model config.
	type mapped struct {
		m   throughput.Mapping
		err error
	}
	memo := map[[2]string]mapped{}
	mapRow := func(r Row) (throughput.Mapping, error) {
		k := [2]string{r.Model, r.WeightFormat}
		e, ok := memo[k]
		if !ok {
			e.m, e.err = MapRow(r)
			memo[k] = e
		}
		if e.err != nil {
			return throughput.Mapping{}, e.err
		}
		m := e.m
		c := *m.Config
		m.Config = &c
		return m, nil
	}
	for _, r := range rows {
		reason := ""
		switch {
		case r.Kind != "prefill" && r.Kind != "decode":
			reason = "kernel or latency row (" + r.Kind + "): not a throughput row"
		case r.Unit != "tok/s":
			reason = "unit " + r.Unit + ": not tok/s"
		case !r.IsLlamaCPP():
			reason = "engine not llama.cpp: different kernels"
		case r.Secondary():
			reason = "SECONDARY/DERIVED row"
		case r.Build() == 0:
			reason = "llama.cpp build not stated"
		case r.Build() < lo || r.Build() > hi:
			reason = fmt.Sprintf("llama.cpp build b%d outside fitted range b%d..b%d", r.Build(), lo, hi)
		}
		if reason == "" {
			m, err := mapRow(r)
			if err != nil {
				reason = "unmapped: " + err.Error()
			} else if ph, err := Phase(r); err != nil {
				reason = err.Error()
			} else {
				used = append(used, throughput.Point{Line: r.Line, Mapping: m, Phase: ph, Decode: r.Kind == "decode", TokensPerS: r.Value})
				continue
			}
		}
		excluded = append(excluded, throughput.Excluded{Line: r.Line, Reason: reason})
	}
	return used, excluded
}

// Phase converts a prefill or decode row to the roofline phase it
// measured: prefill rows process Prompt tokens per sequence on top of Depth
// cached (llama-bench "ppN @ dD", llama-batched-bench S_PP with Depth 0) in
// forward passes of the row's n_ubatch tokens summed over the sequences
// (llama-batched-bench submits all B prompts as one batch, which llama.cpp
// cuts into ubatches of n_ubatch tokens, not n_ubatch per sequence); decode
// rows generate Gen tokens per sequence after Depth tokens of context
// (llama-bench "tgN @ dD"; llama-batched-bench S_TG has Depth = PP). The
// measured tok/s is the aggregate over the batch, as both tools print.
func Phase(r Row) (roofline.PhaseRequest, error) {
	b := max(r.Batch, 1)
	switch r.Kind {
	case "prefill":
		if r.Prompt <= 0 {
			return roofline.PhaseRequest{}, fmt.Errorf("line %d: prefill row with prompt_tokens %d", r.Line, r.Prompt)
		}
		return roofline.PhaseRequest{Prompt: r.Prompt, Depth: r.Depth, Batch: b, UbatchTokens: r.Ubatch()}, nil
	case "decode":
		if r.Gen <= 0 {
			return roofline.PhaseRequest{}, fmt.Errorf("line %d: decode row with gen_tokens %d", r.Line, r.Gen)
		}
		return roofline.PhaseRequest{Depth: r.Depth, Batch: b, Gen: r.Gen}, nil
	}
	return roofline.PhaseRequest{}, fmt.Errorf("line %d: test_kind %q is not prefill or decode", r.Line, r.Kind)
}
