package profiles

import "embed"

// FusedMoEConfigs holds, per serving engine (fused_moe_configs/<engine>.yaml),
// the expert shapes for which the engine ships a tuned tile configuration of
// its Triton fused-MoE kernel, per GPU as the engine names it, with the
// engine file each entry stands for. The hardware package parses them
// (hardware.BuiltinMoETileConfigs).
//
//go:embed fused_moe_configs/*.yaml
var FusedMoEConfigs embed.FS
