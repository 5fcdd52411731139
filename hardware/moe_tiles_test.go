package hardware

import (
	"errors"
	"math"
	"regexp"
	"testing"
)

func TestBuiltinMoETileConfigs(t *testing.T) {
	g, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	// Mixtral-8x7B's experts (width 14336): vLLM ships a bf16 H100 file at
	// MoE-TP 2 (N=7168) and none at TP 1, but an fp8 one at TP 1.
	for _, c := range []struct {
		experts, n int
		format     string
		want       bool
	}{
		{8, 7168, "bf16", true},
		{8, 14336, "bf16", false},
		{8, 14336, "fp8_e4m3", true},
		{8, 14336, "fp8_block", false},
		{256, 128, "fp8_block", true},
		{8, 7168, "int4", false},
		{8, 7168, "nvfp4", false},
	} {
		if got := g.MoETunedTiles(c.experts, c.n, c.format); got != c.want {
			t.Errorf("h100 E=%d N=%d %s: tuned %v, want %v", c.experts, c.n, c.format, got, c.want)
		}
	}
	// The list is per device: H200 has a bf16 file for Mixtral's experts
	// at MoE-TP 1, H100 has none.
	h200, err := Lookup("h200")
	if err != nil {
		t.Fatal(err)
	}
	if !h200.MoETunedTiles(8, 14336, "bf16") {
		t.Error("h200 E=8 N=14336 bf16: not tuned, want the NVIDIA_H200 file")
	}
	// A GPU without a device name has no tuned shapes.
	anon := *g
	anon.VLLMDeviceName = ""
	if anon.MoETunedTiles(8, 7168, "bf16") {
		t.Error("a GPU without vllm_device_name has a tuned shape")
	}
	c, _ := BuiltinMoETileConfigs()
	f, ok := c.Tuned("NVIDIA H100 80GB HBM3", 8, 7168, "bf16")
	if !ok || f.File != "E=8,N=7168,device_name=NVIDIA_H100_80GB_HBM3.json" || !hexCommit.MatchString(f.Commit) {
		t.Errorf("Mixtral TP 2 file: %+v, %v", f, ok)
	}
}

var hexCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestParseMoETileConfigsErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"no source":    "devices: {}\n",
		"bad name":     "source: x\ndevices:\n  D:\n    tuned:\n      - {file: \"E=8,N=7168.json\", commit: a}\n",
		"bad experts":  "source: x\ndevices:\n  D:\n    tuned:\n      - {file: \"E=0,N=7168,device_name=D.json\", commit: a}\n",
		"wrong device": "source: x\ndevices:\n  D:\n    tuned:\n      - {file: \"E=8,N=7168,device_name=X.json\", commit: a}\n",
		"not json":     "source: x\ndevices:\n  D:\n    tuned:\n      - {file: \"E=8,N=7168,device_name=D\", commit: a}\n",
	} {
		_, err := ParseMoETileConfigs([]byte(doc), "t.yaml")
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: err %v, want a *FieldError", name, err)
		}
	}
	c, err := ParseMoETileConfigs([]byte("source: x\ndevices:\n  D_1:\n    tuned:\n      - {file: \"E=8,N=64,device_name=D_1,dtype=fp8_w8a8,block_shape=[128,128].json\", commit: a}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Tuned("D 1", 8, 64, "fp8_block"); !ok {
		t.Error("block-scaled fp8 file not found under the device's spaced name")
	}
	if _, ok := c.Tuned("D 1", 8, 64, "fp8_e4m3"); ok {
		t.Error("a block-scaled file stands for per-tensor fp8")
	}
}

// TestDefaultTilesSlowdown checks the factor against its definition:
// 1 + Max / (1 + (Half/tpe)^Exp).
func TestDefaultTilesSlowdown(t *testing.T) {
	e := OpEfficiency{DefaultTiles: Curve{Max: 3, Half: 64, Exp: 2}}
	for _, tpe := range []float64{1, 64, 640} {
		want := 1 + 3/(1+math.Pow(64/tpe, 2))
		if got := e.DefaultTilesSlowdown(tpe); math.Abs(got-want) > 1e-12*want {
			t.Errorf("tpe %g: %g, want %g", tpe, got, want)
		}
	}
	if got := (&OpEfficiency{}).DefaultTilesSlowdown(100); got != 1 {
		t.Errorf("no term: %g, want 1", got)
	}
	if err := (OpEfficiency{Compute: Curve{Max: 0.5}, Memory: Curve{Max: 0.5}, DefaultTiles: Curve{Max: 25}}).validate("fused_moe.bf16"); err == nil || err.Path != "fused_moe.bf16.default_tiles.max" {
		t.Errorf("slowdown 25: err %v, want one naming default_tiles.max", err)
	}
}
