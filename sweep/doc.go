// Package sweep plans capacity: for every configuration of a grid (GPU type x
// tensor-parallel degree x max_num_seqs x max_num_batched_tokens) it finds the
// highest request rate a single serving instance sustains while meeting every
// latency SLO, then derives replicas, GPUs and cost for a target rate, the
// Pareto front of throughput per GPU against speed per user, and a
// recommendation.
//
// Reading order: grid.go (the configurations and their stable index),
// slo.go (latency objectives), search.go (bracketing and narrowing),
// probe.go (one simulation at one rate, with an exact early stop),
// saturation.go (the saturation probe and where the search starts),
// run.go (Options, Run, the worker pool), cost.go (prices and replicas),
// pareto.go (front and recommendation), table.go (Parquet and CSV columns),
// merge.go (joining shards), fingerprint.go (what identifies a sweep).
//
// Every probe is an independent engine (sim.Run is single-goroutine with no
// shared state), so configurations run in parallel; results are placed by
// configuration index and are identical whatever the scheduling.
package sweep
