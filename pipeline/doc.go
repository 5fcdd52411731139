// Package pipeline is one simulated run from a workload spec to its record:
// resolve the spec's model and GPU and prepare the deployment (a Plan), run
// the engine on a request source while records stream to a sink, assemble
// the result in vllm bench serve's schema, and write run.json (Record).
//
// `sim run`, the web view, `sim sweep`, calibration and `sim observe` share
// it, so a setting, a note or a key of run.json is added in one place. The
// package does not print, read flags or the environment, or write files.
//
// Reading order: Resolve and Plan (plan.go; Prepare and Engine for callers
// that resolve the model and GPU themselves), Plan.Source and Plan.Run
// (run.go), NewResult (result.go), Record (record.go).
package pipeline
