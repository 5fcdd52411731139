// Package moeconfigs embeds, per serving engine (<engine>.yaml), the
// expert shapes for which the engine ships a tuned tile configuration of
// its Triton fused-MoE kernel, per GPU as the engine names it, with the
// engine file each entry stands for and the paths looked up and not found.
// The hardware package parses them (hardware.BuiltinMoETileConfigs); a
// fused-MoE curve's default_tiles term prices the shapes without one.
//
// vllm.yaml: vLLM's files are
// vllm/model_executor/layers/fused_moe/configs/E=<experts on the GPU>,
// N=<expert width on the GPU>,device_name=<device>[,dtype=fp8_w8a8]
// [,block_shape=[128,128]].json (fused_moe.py get_config_file_name); a
// shape with a file runs its tuned tiles, any other get_default_config's.
// The list was made by exact-path look-ups in an index of the vLLM
// repository (the union of its history, not one release); the file's
// header says which shapes and devices were looked up. A shape not listed
// counts as running default tiles.
package moeconfigs

import "embed"

// Files holds the lists, at the root of the file system.
//
//go:embed *.yaml
var Files embed.FS
