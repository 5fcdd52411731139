package hardware

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/roofsim/roofsim/engine/moeconfigs"
	"github.com/roofsim/roofsim/internal/limits"
)

// MoETileConfigs lists, per GPU as the engine names it, the expert shapes
// for which a serving engine ships a tuned tile configuration of its
// Triton fused-MoE kernel (engine/moeconfigs/<engine>.yaml).
// vLLM reads vllm/model_executor/layers/fused_moe/configs/
// E=<experts>,N=<width>,device_name=<device>[,dtype=<dtype>]
// [,block_shape=[<n>,<k>]].json when it exists and otherwise runs the
// tiles of get_default_config (fused_moe.py get_config_file_name,
// get_moe_configs, try_get_optimal_moe_config): E is the experts on the GPU
// and N the expert width on the GPU ("E, _, N = w2_shape").
type MoETileConfigs struct {
	// Source names the engine tree the files are from.
	Source string `yaml:"source"`
	// Devices maps an engine device name (spaces written "_",
	// VLLMDeviceFileName) to its files.
	Devices map[string]MoETileDevice `yaml:"devices"`

	tuned map[moeTileKey]MoETileFile
}

// MoETileDevice is one device's tuned files and the paths looked up and
// not found (kept as the record of what was checked; not read otherwise).
type MoETileDevice struct {
	Tuned  []MoETileFile `yaml:"tuned"`
	Absent []string      `yaml:"absent,omitempty"`
}

// MoETileFile is one tuned configuration file: its name in the engine's
// configs folder and the engine commit it was found at.
type MoETileFile struct {
	File   string `yaml:"file"`
	Commit string `yaml:"commit"`
}

// moeTileKey is what a tuned file is chosen by.
type moeTileKey struct {
	device       string
	experts, n   int
	dtype, block string
}

// VLLMDeviceFileName is a device name as vLLM writes it in a config file
// name: spaces become "_" ("NVIDIA H100 80GB HBM3" ->
// "NVIDIA_H100_80GB_HBM3").
func VLLMDeviceFileName(device string) string { return strings.ReplaceAll(device, " ", "_") }

// moeTileDtype is the dtype and block shape vLLM's config file names carry
// for an expert weight format (roofline precision name): none for bf16,
// fp8_w8a8 for per-tensor fp8, and [128,128] added for block-scaled fp8.
// ok is false for formats the Triton kernel's tuned files are not read for
// here (weight-only and 4-bit formats run other kernels).
func moeTileDtype(format string) (dtype, block string, ok bool) {
	switch format {
	case "bf16":
		return "", "", true
	case "fp8_e4m3":
		return "fp8_w8a8", "", true
	case "fp8_block":
		return "fp8_w8a8", "[128,128]", true
	}
	return "", "", false
}

// parseMoETileFile reads a config file name of MoETileConfigs's form.
func parseMoETileFile(name string) (moeTileKey, error) {
	var k moeTileKey
	rest, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return k, fmt.Errorf("%q: must end in .json", name)
	}
	rest, k.block, _ = strings.Cut(rest, ",block_shape=")
	parts := strings.Split(rest, ",")
	if len(parts) < 3 || len(parts) > 4 {
		return k, fmt.Errorf("%q: want E=<experts>,N=<width>,device_name=<device>[,dtype=<dtype>][,block_shape=[n,k]].json", name)
	}
	want := []string{"E=", "N=", "device_name=", "dtype="}
	for i, p := range parts {
		v, ok := strings.CutPrefix(p, want[i])
		if !ok || v == "" {
			return k, fmt.Errorf("%q: part %d must be %s<value>", name, i+1, want[i])
		}
		switch i {
		case 0, 1:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return k, fmt.Errorf("%q: %s must be a positive integer", name, strings.TrimSuffix(want[i], "="))
			}
			if i == 0 {
				k.experts = n
			} else {
				k.n = n
			}
		case 2:
			k.device = v
		case 3:
			k.dtype = v
		}
	}
	return k, nil
}

// ParseMoETileConfigs parses and indexes a tuned-configuration list; origin
// names it in errors. Every tuned file name must parse and name the device
// it is listed under.
func ParseMoETileConfigs(data []byte, origin string) (*MoETileConfigs, error) {
	var c MoETileConfigs
	if _, err := decodeStrict(data, origin, &c); err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Source) == "" {
		return nil, fmt.Errorf("%s: %w", origin, fieldErr("source", "must name the engine tree the files are from"))
	}
	c.tuned = map[moeTileKey]MoETileFile{}
	for _, dev := range slices.Sorted(maps.Keys(c.Devices)) {
		for i, f := range c.Devices[dev].Tuned {
			at := fmt.Sprintf("devices.%s.tuned[%d].file", dev, i)
			k, err := parseMoETileFile(f.File)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", origin, fieldErr(at, err.Error()))
			}
			if k.device != dev {
				return nil, fmt.Errorf("%s: %w", origin, fieldErr(at, fmt.Sprintf("names device %q, listed under %q", k.device, dev)))
			}
			c.tuned[k] = f
		}
	}
	return &c, nil
}

// Tuned returns the tuned file for experts of format on device (a
// GPU.VLLMDeviceName) at the given experts and expert width on the GPU,
// and whether the list has one. False for an empty device or a format
// without tuned files (moeTileDtype).
func (c *MoETileConfigs) Tuned(device string, experts, n int, format string) (MoETileFile, bool) {
	dtype, block, ok := moeTileDtype(format)
	if c == nil || !ok || device == "" {
		return MoETileFile{}, false
	}
	f, ok := c.tuned[moeTileKey{device: VLLMDeviceFileName(device), experts: experts, n: n, dtype: dtype, block: block}]
	return f, ok
}

// builtinMoETiles parses the embedded vLLM list once; the result is never
// modified.
var builtinMoETiles = sync.OnceValues(func() (*MoETileConfigs, error) {
	const name = "vllm.yaml"
	data, err := moeconfigs.Files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return ParseMoETileConfigs(data, "engine/moeconfigs/"+name)
})

// BuiltinMoETileConfigs is vLLM's tuned fused-MoE tile list embedded from
// engine/moeconfigs/vllm.yaml (parsed once; read only).
func BuiltinMoETileConfigs() (*MoETileConfigs, error) { return builtinMoETiles() }

// MoETunedTiles reports whether vLLM ships a tuned fused-MoE tile
// configuration for g's device (VLLMDeviceName) at experts experts and
// expert width n on the GPU, for expert weight format format. It panics
// only when the embedded list is broken (the package tests parse it).
func (g *GPU) MoETunedTiles(experts, n int, format string) bool {
	c, err := BuiltinMoETileConfigs()
	if err != nil {
		panic(fmt.Sprintf("built-in fused-MoE tile list: %v", err))
	}
	_, ok := c.Tuned(g.VLLMDeviceName, experts, n, format)
	return ok
}

// DefaultTilesSlowdown is the factor DefaultTiles multiplies the compute
// time of an expert shape without a tuned tile configuration by at tpe
// tokens per expert: 1 + DefaultTiles.At(tpe), 1 without the term.
func (o *OpEfficiency) DefaultTilesSlowdown(tpe float64) float64 {
	if !(o.DefaultTiles.Max > 0) {
		return 1
	}
	return 1 + o.DefaultTiles.At(tpe)
}

// MaxDefaultTilesSlowdown bounds DefaultTiles.Max: a default tile
// configuration more than this many times slower than the tuned one is a
// unit mistake, not a kernel.
const MaxDefaultTilesSlowdown = 20

// validateSlowdown checks a DefaultTiles curve: all zero (no term), or Max
// in (0, MaxDefaultTilesSlowdown], Half >= 0 and Exp in [0, MaxCurveExp].
func (c Curve) validateSlowdown(prefix string) *FieldError {
	if c == (Curve{}) {
		return nil
	}
	if err := within(prefix+".max", c.Max, 1e-9, MaxDefaultTilesSlowdown); err != nil {
		return err
	}
	if err := within(prefix+".exp", c.Exp, 0, limits.MaxCurveExp); err != nil {
		return err
	}
	return nonNegative(prefix+".half", c.Half)
}
