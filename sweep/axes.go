package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/sim"
	"github.com/roofsim/roofsim/workload"
)

// Keys of the settings that Grid holds in typed lists (Grid.Set routes them
// there) and of those a sweep treats specially.
const (
	keyGPU                 = "gpu"
	keyTP                  = "tp"
	keyDP                  = "dp"
	keyEP                  = "ep"
	keyMaxNumSeqs          = "serving.max_num_seqs"
	keyMaxNumBatchedTokens = "serving.max_num_batched_tokens"
	keyModel               = "model"
)

// Unswept returns why a sweep does not vary the setting key, "" when it
// does: every probe runs one instance, and replicas are sized for the
// target rate.
func Unswept(key string) string {
	switch key {
	case "replicas":
		return "not swept: every probe runs one instance; the sweep sizes replicas for the target rate"
	case "router":
		return "not swept: every probe runs one instance, so no router"
	}
	return ""
}

// typedList returns the int list of g that holds the setting key, nil when
// the key has none (gpu has a string list, GPUs; the others are axes).
func (g *Grid) typedList(key string) *[]int {
	switch key {
	case keyTP:
		return &g.TP
	case keyDP:
		return &g.DP
	case keyEP:
		return &g.EP
	case keyMaxNumSeqs:
		return &g.MaxNumSeqs
	case keyMaxNumBatchedTokens:
		return &g.MaxNumBatchedTokens
	}
	return nil
}

// ParseAxis reads one grid axis, "KEY=V1,V2,...": KEY is any setting of
// workload.Deployment (a sweep leaves replicas and router alone), each value
// is read as the setting's type (workload.ParseValue) and kept in canonical
// form. An unknown key is a *workload.UnknownSettingError; every other
// problem a *GridError naming the key.
func ParseAxis(text string) (Axis, error) {
	key, list, ok := strings.Cut(text, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Axis{}, &GridError{Field: strings.TrimSpace(text), Reason: "want KEY=V1,V2,... (e.g. tp=1,2,4)"}
	}
	var vals []string
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v != "" {
			vals = append(vals, v)
		}
	}
	a := Axis{Key: key, Values: vals}
	if err := a.canonicalize(); err != nil {
		return Axis{}, err
	}
	return a, nil
}

// canonicalize checks that a names a sweepable setting and has distinct
// values of its type, and rewrites them in canonical form.
func (a *Axis) canonicalize() error {
	s, err := workload.LookupSetting(a.Key)
	if err != nil {
		return err
	}
	if why := Unswept(a.Key); why != "" {
		return &GridError{Field: a.Key, Reason: why}
	}
	if len(a.Values) == 0 {
		return &GridError{Field: a.Key, Reason: "empty list"}
	}
	out := make([]string, 0, len(a.Values))
	for _, text := range a.Values {
		v, err := s.Parse(text)
		if err != nil {
			reason := err.Error()
			var fe *workload.FieldError
			if errors.As(err, &fe) {
				reason = fe.Reason
			}
			return &GridError{Field: a.Key, Reason: reason}
		}
		c := workload.Text(v)
		if slices.Contains(out, c) {
			return &GridError{Field: a.Key, Reason: fmt.Sprintf("%s listed twice", c)}
		}
		out = append(out, c)
	}
	a.Values = out
	return nil
}

// ParseGrid reads grid axes (ParseAxis), refusing a key given twice.
func ParseGrid(texts []string) ([]Axis, error) {
	var out []Axis
	for _, t := range texts {
		a, err := ParseAxis(t)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(b Axis) bool { return b.Key == a.Key }) {
			return nil, &GridError{Field: a.Key, Reason: "given twice"}
		}
		out = append(out, a)
	}
	return out, nil
}

// Set makes a (from ParseAxis) an axis of g: gpu, tp, dp, ep,
// serving.max_num_seqs and serving.max_num_batched_tokens replace their
// typed lists (so the rows are those of the lists), any other key becomes
// one of Settings; a key already in Settings is a *GridError.
func (g *Grid) Set(a Axis) error {
	if a.Key == keyGPU {
		g.GPUs = slices.Clone(a.Values)
		return nil
	}
	if l := g.typedList(a.Key); l != nil {
		*l = (*l)[:0:0]
		for _, v := range a.Values {
			n, err := strconv.Atoi(v)
			if err != nil {
				return &GridError{Field: a.Key, Reason: fmt.Sprintf("want an integer, got %q", v)}
			}
			*l = append(*l, n)
		}
		return nil
	}
	if g.sweeps(a.Key) {
		return &GridError{Field: a.Key, Reason: "given twice"}
	}
	g.Settings = append(g.Settings, Axis{Key: a.Key, Values: slices.Clone(a.Values)})
	return nil
}

// Ints returns the typed integer list of g that holds the setting key (tp,
// dp, ep, serving.max_num_seqs, serving.max_num_batched_tokens), nil for
// any other key.
func (g *Grid) Ints(key string) []int {
	if l := g.typedList(key); l != nil {
		return *l
	}
	return nil
}

// sweeps reports whether key is an axis of g.Settings.
func (g Grid) sweeps(key string) bool {
	return slices.ContainsFunc(g.Settings, func(a Axis) bool { return a.Key == key })
}

// Keys are the keys of g.Settings, in order.
func (g Grid) Keys() []string {
	out := make([]string, len(g.Settings))
	for i, a := range g.Settings {
		out[i] = a.Key
	}
	return out
}

// checkSettings validates g.Settings against the base settings: each axis
// a sweepable setting held by no typed list and given once, each value of
// its type, distinct, a known model where the model is swept, and valid on
// its own (workload.Deployment.Validate with base's other settings; a
// problem that other settings cause shows up as a skipped configuration).
func (g Grid) checkSettings(base workload.Deployment) error {
	seen := map[string]bool{}
	for _, a := range g.Settings {
		if a.Key == keyGPU || g.typedList(a.Key) != nil {
			return &GridError{Field: a.Key, Reason: "has its own list in the grid (Grid.Set puts it there)"}
		}
		if seen[a.Key] {
			return &GridError{Field: a.Key, Reason: "given twice"}
		}
		seen[a.Key] = true
		c := a
		if err := c.canonicalize(); err != nil {
			return err
		}
		same := map[string]string{} // the catalog's name -> as listed
		for _, v := range c.Values {
			if err := checkValue(base, a.Key, v); err != nil {
				return err
			}
			name := sim.SameSettingValue(a.Key, v)
			if first, dup := same[name]; dup {
				return &GridError{Field: a.Key, Reason: fmt.Sprintf("%s listed twice (%s is the same, %s)", v, first, name)}
			}
			same[name] = v
		}
	}
	return nil
}

// checkValue checks one value of a swept setting on base.
func checkValue(base workload.Deployment, key, v string) error {
	if err := sim.CheckSettingValue(key, v); err != nil {
		return &GridError{Field: key, Reason: err.Error()}
	}
	d := base
	if err := d.Set(key, v); err != nil {
		return err
	}
	var fe *workload.FieldError
	if err := d.Validate(); errors.As(err, &fe) && fe.Key == key {
		return &GridError{Field: key, Reason: v + ": " + fe.Reason}
	}
	return nil
}

// apply sets c's swept settings on dep, resolving a swept model.
func (c Config) apply(dep *sim.Deployment) error {
	for _, sv := range c.Settings {
		if err := dep.Settings.Set(sv.Key, sv.Value); err != nil {
			return err
		}
		if sv.Key == keyModel {
			m, err := model.Resolve(sv.Value)
			if err != nil {
				return err
			}
			dep.Model = m
		}
	}
	return nil
}

// SettingsText is c's swept settings as "key=value" words separated by
// spaces, "" when the grid sweeps none.
func (c Config) SettingsText() string {
	words := make([]string, len(c.Settings))
	for i, sv := range c.Settings {
		words[i] = sv.Key + "=" + sv.Value
	}
	return strings.Join(words, " ")
}
