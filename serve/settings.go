package serve

import (
	"maps"
	"net/http"
	"slices"

	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/sweep"
	"github.com/roofsim/roofsim/workload"
)

// settingInfo describes one deployment setting for the page's generated
// forms: everything comes from the reflection over workload.Deployment
// (workload.DeploymentSettings), its defaults, its Validate ranges and the
// vocabularies of the packages that own a setting's names.
type settingInfo struct {
	// Key is the workload file's key ("serving.max_num_seqs"); Flag the
	// command line's (--max-num-seqs).
	Key  string `json:"key"`
	Flag string `json:"flag"`
	// Type is string, int, uint, float, bool or duration.
	Type    string `json:"type"`
	Default any    `json:"default"`
	Help    string `json:"help"`
	// Values lists the accepted names of an enumeration (null otherwise).
	Values []string `json:"values"`
	// Min and Max bound a numeric setting (null when unchecked); MinExclusive
	// makes the lower bound open.
	Min          *float64 `json:"min"`
	Max          *float64 `json:"max"`
	MinExclusive bool     `json:"min_exclusive,omitempty"`
	// Sweep says whether `sim sweep --grid` varies the setting.
	Sweep bool `json:"sweep"`
}

// settingsInfo lists every setting of workload.Deployment in field order.
func settingsInfo() []settingInfo {
	def := workload.DefaultDeployment()
	all := workload.DeploymentSettings()
	out := make([]settingInfo, 0, len(all))
	for _, s := range all {
		v, err := def.Get(s.Key)
		if err != nil {
			panic(err) // the key came from the same reflection
		}
		info := settingInfo{Key: s.Key, Flag: s.Flag(), Type: s.TypeName(), Default: v, Help: s.Help, Values: sim.SettingValues(s.Key),
			Sweep: sweep.Unswept(s.Key) == ""}
		if r, ok := workload.SettingRange(s.Key); ok {
			info.Min, info.Max, info.MinExclusive = &r.Min, &r.Max, r.MinExclusive
		}
		out = append(out, info)
	}
	return out
}

// handleSettings answers GET /api/settings: the deployment settings
// (settingInfo), from which the page builds its simulate form and reads a
// sweep table's setting columns.
func (s *Server) handleSettings(*http.Request) (any, error) { return settingsInfo(), nil }

// applySettings sets the deployment settings a request overrides, by key
// and in text form as a workload file or flag gives them (workload.Deployment.Set);
// an unknown key or a value that does not parse is a bad request naming it.
// Keys are applied in the order of the settings, so the first error is the
// same on every call.
func applySettings(d *workload.Deployment, settings map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if _, err := workload.LookupSetting(k); err != nil {
			return errorf(http.StatusBadRequest, "settings: %v", err)
		}
	}
	for _, s := range workload.DeploymentSettings() {
		if v, ok := settings[s.Key]; ok {
			if err := d.Set(s.Key, v); err != nil {
				return badRequest(err)
			}
		}
	}
	return nil
}
