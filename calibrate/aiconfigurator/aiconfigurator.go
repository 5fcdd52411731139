// Package aiconfigurator reads the CSV layouts of NVIDIA AIConfigurator's
// measured data (Apache-2.0): the per-GPU kernel tables (gemm.csv,
// context_attention.csv, ...) that package calibrate/kernels fits, and the
// end-to-end closed-loop serving table that package calibrate/serving
// predicts. It is the only place that knows their column names; every error
// names file:line:column (internal/table).
//
// Reading order: kernels.go (Dir, ReadKernels and one parser per table),
// serving.go (ReadServing).
package aiconfigurator
