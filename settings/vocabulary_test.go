package settings

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
)

// A setting whose values are a vocabulary is checked by its owner's type:
// Validate and Set report a *FieldError naming the key that wraps the
// owner's typed error.
func TestVocabularySettings(t *testing.T) {
	for _, c := range []struct {
		key, value string
		target     any
	}{
		{"router", "random", new(*routing.UnknownError)},
		{"weights", "fp7", new(*roofline.UnknownPrecisionError)},
		{"kv_cache_dtype", "fp7", new(*roofline.UnknownPrecisionError)},
		{"act_dtype", "fp7", new(*roofline.UnknownPrecisionError)},
		{"serving.moe_kernel", "triton", new(*roofline.UnknownMoEKernelError)},
	} {
		d := DefaultDeployment()
		err := d.Set(c.key, c.value)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Key != c.key || !errors.As(err, c.target) {
			t.Errorf("Set(%q, %q) = %v, want a *FieldError for the key wrapping %T", c.key, c.value, err, c.target)
		}
		// A value placed without parsing is caught by Validate the same way.
		s, _ := LookupSetting(c.key)
		reflect.ValueOf(&d).Elem().FieldByIndex(s.Index).SetString(c.value)
		err = d.Validate()
		if !errors.As(err, &fe) || fe.Key != c.key || !errors.As(err, c.target) {
			t.Errorf("Validate with %s %q = %v, want a *FieldError for the key wrapping %T", c.key, c.value, err, c.target)
		}
	}
}

// The scheduling policy is the scheduler's: Set wraps its typed error, and
// Validate reports the scheduler's check under the setting's key.
func TestPolicySetting(t *testing.T) {
	d := DefaultDeployment()
	err := d.Set("serving.scheduling_policy", "lifo")
	var fe *FieldError
	var pe *scheduler.UnknownPolicyError
	if !errors.As(err, &fe) || fe.Key != "serving.scheduling_policy" || !errors.As(err, &pe) {
		t.Errorf("Set(serving.scheduling_policy, lifo) = %v", err)
	}
	d.Serving.Policy = "lifo"
	if err := d.Validate(); !errors.As(err, &fe) || fe.Key != "serving.scheduling_policy" {
		t.Errorf("Validate with policy lifo = %v", err)
	}
}

// The typed settings write and read back as the plain strings they were.
func TestVocabularySettingsJSON(t *testing.T) {
	d := DefaultDeployment()
	d.Router, d.Weights, d.KVCacheDType, d.Serving.MoEKernel, d.Serving.Policy = routing.PrefixAffinity, "fp8", "fp8_e4m3", roofline.MoEKernelDeepGEMM, scheduler.PolicySJF
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]any
	if err := json.Unmarshal(b, &flat); err != nil {
		t.Fatal(err)
	}
	if flat["router"] != "prefix-affinity" || flat["weights"] != "fp8" || flat["act_dtype"] != "" || flat["serving"].(map[string]any)["moe_kernel"] != "deepgemm" || flat["serving"].(map[string]any)["scheduling_policy"] != "sjf" {
		t.Errorf("JSON %s", b)
	}
	var back Deployment
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Errorf("read back %+v, %v; want %+v", back, err, d)
	}
}
