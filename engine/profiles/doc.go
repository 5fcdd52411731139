// Package profiles embeds the engine profiles, one file
// <engine>-<release>.yaml per serving-engine release (vllm-0.20.1.yaml,
// llama.cpp-b6989.yaml): the release's step, host and per-request costs,
// its CUDA-graph policy, its fusion passes and which kernel path each
// operator takes on each GPU architecture, each with its provenance or the
// engine source it follows. The hardware package parses them
// (hardware.ReadEngineProfiles) and prices every GPU profile of the
// built-in catalog with the one nearest the release its kernels were
// calibrated for; README.md says how they are made.
package profiles

import "embed"

// Files holds the engine profiles, at the root of the file system.
//
//go:embed *.yaml
var Files embed.FS
