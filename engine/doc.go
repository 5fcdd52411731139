// Package engine says what a serving engine release does that the roofline
// does not: which kernel path an operator takes on a GPU architecture, and
// where in the engine's source that decision is made. It keys every
// decision on the GPU's architecture (hardware.Arch), never on a GPU name.
//
// Reading order: engine.go (an engine and release, Engine, parsed from
// "vllm@0.12.0"; the known engines), version.go (release numbers and their
// order), moe_kernel.go (the routed experts' kernel path per release: a
// matcher over the engine profile's moe kernel paths, implementing
// roofline.MoEKernelPolicy), profile.go (the engine a GPU
// profile's label names), engine_profile.go (a release's engine profile:
// its step, host and per-request costs, CUDA-graph policy, fusion passes
// and cited kernel paths per architecture, from the files in profiles/,
// which hardware.ReadEngineProfiles parses and the GPU catalog prices
// every GPU profile with).
package engine
