// Package steps compares the step model with measured engine steps and
// fits the engine's per-step costs to them.
//
// A per-step timing table (vLLM's forward-pass metrics,
// fpm_metrics_detail.csv) gives, for every engine step, its batch in
// aggregate (prefill tokens, chunks and their cached context, decodes and
// their summed KV length, the variances) and its wall time. End-to-end
// latencies cannot separate per-step, per-request and per-token costs;
// these tables can.
//
// Reading order:
//   - fpm.go: the table (ReadFPM, Row, Kind) and its checks;
//   - engine.go: the engine settings beside it (effective_vllm_config.json:
//     TP, the CUDA-graph capture limit);
//   - batch.go: a row rebuilt into the roofline.StepInput the step model
//     prices (Batch);
//   - validate.go: every row priced by the same roofline.StepModel that
//     `sim run` uses, the errors by step kind and segment (Predict,
//     Report), and the rows written back with predictions;
//   - fit.go and lsq.go: the engine terms (Terms) fitted by box-constrained
//     least squares on top of the kernel-calibrated profile (Fit);
//   - scatter.go: the predicted-against-measured chart.
package steps
