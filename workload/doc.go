// Package workload describes what clients send to an inference server and generates the
// resulting request stream deterministically from a seed.
//
// Reading order:
//   - deployment.go: the deployment settings every command shares ([Deployment],
//     [DefaultDeployment], [Deployment.Validate]); a workload file embeds them.
//   - spec.go: the workload file ([Spec], [Parse], [Load], [Spec.Validate]).
//   - lengthdist.go: token-length distributions ([LengthDist]).
//   - request.go: the [Request] the engine consumes and its prefix-cache identity ([Segment]).
//   - arrival.go: open-loop arrival processes (poisson, constant, gamma; stages).
//   - generator.go: [Generator], which merges all clients lazily ([Generator.NextArrival])
//     and produces closed-loop and multi-turn follow-ups ([Generator.OnComplete]).
//   - rate.go: [Spec.TotalRate] and [Spec.WithRate] for rate sweeps.
//   - replay.go: trace replay from CSV, JSON Lines or Parquet ([LoadTrace]).
//
// Times are integer nanoseconds of simulated time, rates are requests per second and
// lengths are token counts. Nothing here reads the wall clock or global random state:
// every subsystem (arrivals, prompt lengths, output lengths, prefix choice, session
// turns) draws from its own PCG stream derived from the seed and the client index.
package workload
