package sim

import (
	engines "github.com/roofsim/roofsim/engine"
	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/roofline"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/scheduler"
	"github.com/roofsim/roofsim/settings"
)

// vocabulary ties a settings.Deployment setting whose values are names to the
// package that owns them: names lists them, check resolves one value as
// Deployment.Validate and Prepare will.
type vocabulary struct {
	key   string
	names func() []string
	check func(v string) error
	// same, where set, is the name v resolves to, equal for aliases of one
	// entry (h100 and h100-sxm; BF16 and bf16).
	same func(v string) (string, error)
}

// vocabularies lists the settings whose values are names owned by a catalog
// (GPUs, models) or by the type of the setting (routers, precisions,
// scheduling policies, MoE kernel paths), with the owner's own list. A new
// setting of that kind adds its entry here; every other setting is a number,
// a boolean or free text that settings.Deployment.Validate checks.
func vocabularies() []vocabulary {
	dtype := func(v string) error { _, err := roofline.ParseDType(v); return err }
	precision := func(v string) (string, error) {
		if v == "" {
			return "", nil
		}
		p, err := roofline.LookupPrecision(v)
		return p.Name, err
	}
	modelName := func(v string) (string, error) {
		m, err := model.Resolve(v)
		if err != nil {
			return "", err
		}
		return m.Name, nil
	}
	gpuName := func(v string) (string, error) {
		g, err := hardware.Resolve(v)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	}
	gpuCheck := func(v string) error { _, err := hardware.Resolve(v); return err }
	routerCheck := func(v string) error { _, err := routing.Parse(v); return err }
	return []vocabulary{
		{"model", model.Names, func(v string) error { _, err := model.Resolve(v); return err }, modelName},
		{"gpu", hardware.Names, gpuCheck, gpuName},
		{"router", routing.Names, routerCheck, nil},
		{"weights", roofline.DTypes, dtype, precision},
		{"kv_cache_dtype", roofline.DTypes, dtype, precision},
		{"act_dtype", roofline.DTypes, dtype, precision},
		{"serving.scheduling_policy", scheduler.PolicyNames, nil, nil},
		{"serving.moe_kernel", roofline.MoEKernels, nil, nil},
		{"serving.async_scheduling", engines.AsyncModes, nil, nil},
		{"serving.speculative.method", roofline.SpecMethods, nil, nil},
		{"serving.speculative.draft_model", model.Names, func(v string) error {
			if v == "" {
				return nil
			}
			_, err := model.Resolve(v)
			return err
		}, nil},
		{"disaggregation.prefill.gpu", hardware.Names, gpuCheck, gpuName},
		{"disaggregation.decode.gpu", hardware.Names, gpuCheck, gpuName},
		{"disaggregation.prefill.router", routing.Names, routerCheck, nil},
		{"disaggregation.decode.router", routing.Names, routerCheck, nil},
		{"disaggregation.kv_transfer.link", settings.KVLinks, func(v string) error { return settings.KVLink(v).Validate() }, nil},
	}
}

// SettingValues returns the names the setting key takes where its owner lists
// them (catalog GPUs and models, precisions, routers, scheduling policies, MoE
// kernel paths), nil for a setting with no such list. Model and GPU also
// accept file paths, and precisions aliases; the list is what a form offers.
func SettingValues(key string) []string {
	for _, v := range vocabularies() {
		if v.key == key {
			return v.names()
		}
	}
	return nil
}

// CheckSettingValue resolves one value of the setting key against the
// catalog that owns its names, as Prepare will (nil for a setting without
// one; Deployment.Validate checks the rest).
func CheckSettingValue(key, value string) error {
	for _, v := range vocabularies() {
		if v.key == key && v.check != nil {
			return v.check(value)
		}
	}
	return nil
}

// SameSettingValue is the name value of the setting key resolves to in the
// catalog that owns its names, equal for two aliases of one entry ("h100"
// and "h100-sxm" are both "h100"); value itself for a setting without a
// catalog or a value the catalog does not resolve (CheckSettingValue
// reports that).
func SameSettingValue(key, value string) string {
	for _, v := range vocabularies() {
		if v.key == key && v.same != nil {
			if name, err := v.same(value); err == nil {
				return name
			}
		}
	}
	return value
}
