package throughput

import (
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
)

// Mapping is how a measured model is priced: its catalog architecture and
// the per-tensor-class precisions of the weights file it measured.
type Mapping struct {
	// Model is the catalog name of the architecture.
	Model  string
	Config *model.Config
	// Format is the short weight-format label ("q8_0", "q4_k_m", "mxfp4-gguf", ...).
	Format  string
	Options roofline.StepOptions
}

// Key identifies a (model, format) pair.
func (m Mapping) Key() string { return m.Model + " " + m.Format }

// Point is one measured phase rate the fit prices: a prefill or decode
// phase of a mapped model, and its measured tokens per second (aggregate
// over the phase's batch).
type Point struct {
	// Line is the measurement's line in its file.
	Line    int
	Mapping Mapping
	Phase   roofline.PhaseRequest
	// Decode marks a decode phase; false is prefill.
	Decode     bool
	TokensPerS float64
}

// Excluded is a measurement the fit leaves out, with the reason.
type Excluded struct {
	Line   int
	Reason string
}

// Prior is where the fit starts, from a dataset's kernel-level rows: the
// memory-curve and GEMM compute maxima (0: no row says; the fit then starts
// at 0.85 and 0.6), with notes saying which rows set them.
type Prior struct {
	MemoryMax, GEMMMax float64
	Notes              []string
}

// Provenance names a dataset in profiles and reports.
type Provenance struct {
	// File is the data file as given.
	File string
	// SHA256 is the hex SHA-256 of the file as read ("" when unknown).
	SHA256 string
	// Rows is the number of rows in the file.
	Rows int
	// Engine is the measured engine, recorded as the profile's engine
	// ("llama.cpp b6989-b7941 (CUDA, flash attention)").
	Engine string
	// Selection says which rows the fit uses ("llama.cpp prefill/decode
	// rows of builds b6989..b7941").
	Selection string
}

// Source is a measured dataset seen through its adapter (package
// calibrate/llamacpp reads llama-bench and llama-batched-bench rows).
type Source interface {
	// Points returns the measurements the fit can price, in file order,
	// and those it cannot, with the reason.
	Points() ([]Point, []Excluded)
	// Prior returns the starting efficiencies the dataset's kernel-level
	// rows suggest for g.
	Prior(g *hardware.GPU) Prior
	// Provenance names the dataset.
	Provenance() Provenance
}
