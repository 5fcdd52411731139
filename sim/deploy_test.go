package sim

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/settings"
)

func deployment(t *testing.T, mutate func(s *settings.Deployment)) Deployment {
	t.Helper()
	m, err := model.Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := hardware.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	s := settings.DefaultDeployment()
	mutate(&s)
	return Deployment{Model: m, GPU: g, Settings: s}
}

// Prepare takes every setting from Settings: the memory share scales the KV
// capacity, act_dtype reaches the step model, a pin is kept, and nothing
// falls back to a default of its own.
func TestPrepareUsesSettings(t *testing.T) {
	base, err := Prepare(deployment(t, func(*settings.Deployment) {}))
	if err != nil {
		t.Fatal(err)
	}
	less, err := Prepare(deployment(t, func(s *settings.Deployment) { s.Serving.GPUMemoryUtilization = 0.7 }))
	if err != nil {
		t.Fatal(err)
	}
	if !(less.Scheduler.NumGPUBlocks < base.Scheduler.NumGPUBlocks) || less.Capacity.BudgetBytes >= base.Capacity.BudgetBytes {
		t.Errorf("utilization 0.7: %d blocks, not fewer than 0.9's %d", less.Scheduler.NumGPUBlocks, base.Scheduler.NumGPUBlocks)
	}
	fp16, err := Prepare(deployment(t, func(s *settings.Deployment) { s.ActDType = "fp16" }))
	if err != nil {
		t.Fatal(err)
	}
	if got := fp16.Step.Options().ActDType; got != "fp16" {
		t.Errorf("act_dtype fp16: step model uses %q", got)
	}
	pinned, err := Prepare(deployment(t, func(s *settings.Deployment) {
		s.Serving.NumGPUBlocks, s.Serving.LongPrefillTokenThreshold = 1234, 512
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !pinned.Pinned || pinned.Scheduler.NumGPUBlocks != 1234 || pinned.Scheduler.LongPrefillTokenThreshold != 512 {
		t.Errorf("pinned: %+v", pinned.Scheduler)
	}
	cg, err := Prepare(deployment(t, func(s *settings.Deployment) { s.Serving.MaxCUDAGraphCaptureSize = 64 }))
	if err != nil {
		t.Fatal(err)
	}
	if got := cg.Step.Options().GraphCaptureMaxTokens; got != 64 {
		t.Errorf("max_cudagraph_capture_size 64: step model captures up to %d", got)
	}
	if base.Scheduler.MaxModelLen != 131072 {
		t.Errorf("max_model_len 0 should take the model's context, got %d", base.Scheduler.MaxModelLen)
	}
}

// Bad settings are errors naming the key, also for a zero memory share that
// used to mean 0.9.
func TestPrepareRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		mutate func(s *settings.Deployment)
		key    string
	}{
		{func(s *settings.Deployment) { s.Serving.GPUMemoryUtilization = 0 }, "serving.gpu_memory_utilization"},
		{func(s *settings.Deployment) { s.TP = 0 }, "tp"},
		{func(s *settings.Deployment) { s.Serving.MaxModelLen = 1 << 20 }, "serving.max_model_len"},
	} {
		_, err := Prepare(deployment(t, tc.mutate))
		var fe *settings.FieldError
		if !errors.As(err, &fe) || fe.Key != tc.key {
			t.Errorf("Prepare = %v, want a field error for %s", err, tc.key)
		}
	}
	_, err := Prepare(deployment(t, func(s *settings.Deployment) { s.TP = 3 }))
	if err == nil || !strings.Contains(err.Error(), "tp") {
		t.Errorf("tp 3 on 32 heads: %v", err)
	}
}

// The settings' default router and policy are ones the engine knows.
func TestDefaultSettingsKnownToEngine(t *testing.T) {
	def := settings.DefaultDeployment()
	if !slices.Contains(routing.Routers(), def.Router) {
		t.Errorf("default router %q is not one of %v", def.Router, routing.Names())
	}
}

// Unknown precisions are named by the settings' keys, not the step model's.
func TestPrepareNamesPrecisionKeys(t *testing.T) {
	for key, mutate := range map[string]func(s *settings.Deployment){
		"weights":        func(s *settings.Deployment) { s.Weights = "fp3" },
		"kv_cache_dtype": func(s *settings.Deployment) { s.KVCacheDType = "fp3" },
		"act_dtype":      func(s *settings.Deployment) { s.ActDType = "fp3" },
	} {
		_, err := Prepare(deployment(t, mutate))
		var fe *settings.FieldError
		if !errors.As(err, &fe) || fe.Key != key || !strings.Contains(fe.Reason, `unknown precision "fp3"`) {
			t.Errorf("%s fp3: %v", key, err)
		}
	}
}

// A step-model option the settings set is reported under the setting's key
// (found with errors.As), so sim run can name --tp or SIM_TP.
func TestPrepareNamesStepOptionSettings(t *testing.T) {
	for _, tc := range []struct {
		key string
		mut func(s *settings.Deployment)
	}{
		{"tp", func(s *settings.Deployment) { s.TP = 3 }},
		{"weights", func(s *settings.Deployment) { s.Weights = "q4_k:0.5,bf16:0.4" }},
	} {
		_, err := Prepare(deployment(t, tc.mut))
		var fe *settings.FieldError
		if !errors.As(err, &fe) || fe.Key != tc.key {
			t.Errorf("%s: got %v, want a FieldError for %s", tc.key, err, tc.key)
		}
	}
}
