// Package calibrate is the root of the calibration packages, which fit GPU
// efficiency profiles and engine costs to measurements and report how well a
// profile predicts them. Each subpackage fits one kind of measurement:
//
//   - calibrate/kernels: per-operator kernel timings (GEMM, attention, MoE,
//     all-reduce) -> the profile's efficiency curves;
//   - calibrate/serving: end-to-end closed-loop serving benchmarks -> the
//     engine overheads the kernels cannot see;
//   - calibrate/throughput: model-level prefill/decode tokens per second ->
//     a whole profile through the step model;
//   - calibrate/steps and calibrate/observed: per-step engine timings and
//     observed runs -> engine cost terms.
//
// Dataset adapters sit at the edge and are the only code that knows a file
// layout: calibrate/aiconfigurator (NVIDIA AIConfigurator's kernel and e2e
// CSV tables), calibrate/llamacpp (llama-bench and llama-batched-bench rows,
// GGUF recipes), calibrate/vidur (Vidur layer tables, a cross-check). Every
// CSV is read through internal/table; calibrate/internal/fit holds the
// optimiser, the logistic transform and the robust loss the fits share.
//
// This package holds what every report shares. Reading order: stats.go (APE,
// the one error measure, and its nearest-rank quantiles on gonum's
// stat.Quantile), write.go (profile and GPU YAML writers).
package calibrate
