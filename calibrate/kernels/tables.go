package kernels

// The measured rows a calibration reads, whatever table layout they came
// from (an adapter such as package calibrate/aiconfigurator builds them).

// GEMMRow is one measured GEMM C[M,N] = A[M,K] B[K,N] (M = tokens).
type GEMMRow struct {
	M, N, K int
	// Dtype is the table's gemm_dtype: "bfloat16", "fp8", "fp8_block" or "nvfp4".
	Dtype     string
	LatencyMS float64
	Line      int
}

// ContextAttentionRow is one measured prefill attention kernel: Batch
// sequences of ISL tokens each, nothing cached, causal.
type ContextAttentionRow struct {
	Batch, ISL, Heads, KVHeads, HeadDim int
	AttnDtype, KVDtype                  string
	LatencyMS                           float64
	Line                                int
}

// GenerationAttentionRow is one measured decode attention kernel: Batch
// requests, each attending to ISL+Step keys (ISL prompt tokens in the KV
// cache plus Step generated ones; latency grows with Step at fixed ISL).
type GenerationAttentionRow struct {
	Batch, ISL, Heads, KVHeads, HeadDim, Step int
	KVDtype                                   string
	LatencyMS                                 float64
	Line                                      int
}

// KVLen is the number of keys each request attends to: ISL + Step.
func (r GenerationAttentionRow) KVLen() int { return r.ISL + r.Step }

// CollectiveRow is one measured collective: Op ("all_reduce", ...) over
// NumGPUs GPUs of a message of Elements 16-bit elements. Backend is
// "vllm_graph"/"vllm_eager" for the custom all-reduce table and "nccl" for
// the NCCL table.
type CollectiveRow struct {
	Op        string
	NumGPUs   int
	Elements  int
	Backend   string
	LatencyMS float64
	Line      int
}

// Bytes is the message size in bytes (2-byte elements).
func (r CollectiveRow) Bytes() float64 { return 2 * float64(r.Elements) }

// MoERow is one measured fused-MoE kernel.
type MoERow struct {
	Dtype string
	// KernelSource is the table's kernel_source: the vLLM kernel that ran
	// ("vllm_fused_moe", a Marlin or FlashInfer path, ...); "" when the
	// table does not say.
	KernelSource                                         string
	Tokens, Hidden, Inter, TopK, Experts, TPSize, EPSize int
	Distribution                                         string
	LatencyMS                                            float64
	Line                                                 int
}

// Tables holds one GPU's measured kernel tables. A nil slice means the
// table is absent; an empty one, present without rows.
type Tables struct {
	// Dir names where the tables were read from (recorded in the profile).
	Dir string
	// Engine is the serving engine whose kernels were measured, recorded as
	// the profile's engine (e.g. "vllm-0.19.0 kernels").
	Engine string
	// Provenance names the data set and its licence, recorded as the note
	// of the profile's kernels stage.
	Provenance string
	// Files are the table files read and their row counts, in read order.
	Files               []FileCount
	GEMM                []GEMMRow
	ContextAttention    []ContextAttentionRow
	GenerationAttention []GenerationAttentionRow
	CustomAllReduce     []CollectiveRow
	NCCL                []CollectiveRow
	MoE                 []MoERow
	// MLAContext, MLAGeneration, MLABMM, GDN, DSAContext and
	// DSAGeneration are the token-mixer kernel tables (mixer_tables.go),
	// read by ReadAICMixers only.
	MLAContext, MLAGeneration []MLAModuleRow
	MLABMM                    []MLABMMRow
	GDN                       []GDNRow
	DSAContext, DSAGeneration []DSAModuleRow
}

// FileCount is a table file and its data-row count.
type FileCount struct {
	File string `json:"file"`
	Rows int    `json:"rows"`
	// SHA256 is the hex SHA-256 of the file's bytes as read; "" when the
	// tables did not come from a file.
	SHA256 string `json:"sha256,omitempty"`
}

// Source is where Calibrate and Validate get their tables: a dataset
// adapter (aiconfigurator.Dir reads an AIConfigurator kernels directory).
type Source interface {
	Tables() (*Tables, error)
}

// TablesSource is a Source of tables already in memory.
type TablesSource struct{ T *Tables }

// Tables returns s.T.
func (s TablesSource) Tables() (*Tables, error) { return s.T, nil }
