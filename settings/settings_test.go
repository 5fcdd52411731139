package settings

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/internal/limits"
)

// TestSettingsOfPicksUpNewFields: a leaf field added with its tags becomes a
// setting, with its key, flag and help, and nothing else needs an edit:
// the grid, the flags and the web form all read this list.
func TestSettingsOfPicksUpNewFields(t *testing.T) {
	type extended struct {
		Deployment `mapstructure:",squash"`
		Engine     string `mapstructure:"engine" help:"serving engine and release"`
		Extra      struct {
			Knob float64 `mapstructure:"knob_ratio" help:"a nested knob"`
		} `mapstructure:"extra"`
		Hidden string // no help tag: not a setting
	}
	got := SettingsOf(reflect.TypeFor[extended]())
	base := DeploymentSettings()
	if len(got) != len(base)+2 {
		t.Fatalf("%d settings, want the deployment's %d and 2 new", len(got), len(base))
	}
	eng, knob := got[len(base)], got[len(base)+1]
	if eng.Key != "engine" || eng.Flag() != "engine" || eng.TypeName() != "string" || eng.Help == "" {
		t.Errorf("engine: %+v", eng)
	}
	if knob.Key != "extra.knob_ratio" || knob.Flag() != "knob-ratio" || knob.TypeName() != "float" {
		t.Errorf("knob: %+v flag %s", knob, knob.Flag())
	}
	var e extended
	reflect.ValueOf(&e).Elem().FieldByIndex(knob.Index).SetFloat(0.5)
	if e.Extra.Knob != 0.5 {
		t.Error("Index does not reach the field")
	}
}

// TestDeploymentSetGet: every setting reads back what Set wrote, from the
// text of its default; a value that does not parse is a FieldError naming
// the key; an unknown key suggests the close ones.
func TestDeploymentSetGet(t *testing.T) {
	def := DefaultDeployment()
	for _, s := range DeploymentSettings() {
		v, err := def.Get(s.Key)
		if err != nil {
			t.Fatal(err)
		}
		var d Deployment
		if err := d.Set(s.Key, Text(v)); err != nil {
			t.Errorf("%s: %v", s.Key, err)
		}
		if got, _ := d.Get(s.Key); got != v {
			t.Errorf("%s: set %v, got %v", s.Key, v, got)
		}
	}
	d := DefaultDeployment()
	var fe *FieldError
	if err := d.Set("serving.max_num_seqs", "2.5"); !errors.As(err, &fe) || fe.Key != "serving.max_num_seqs" || !strings.Contains(fe.Reason, "want an integer") {
		t.Errorf("2.5: %v", err)
	}
	var ue *UnknownSettingError
	if err := d.Set("block_size", "16"); !errors.As(err, &ue) || !slices.Equal(ue.Close, []string{"serving.block_size"}) || len(ue.Known) != len(DeploymentSettings()) {
		t.Errorf("block_size: %v", err)
	}
	if err := d.Set("zzzzzzzzzz", "1"); !errors.As(err, &ue) || len(ue.Close) != 0 || !strings.Contains(err.Error(), "settings: model, gpu") {
		t.Errorf("unrelated key: %v", err)
	}
}

// TestSettingRangeIsValidates: each range SettingRange reports is the one
// Validate enforces: its bounds pass, one step outside fails naming the key.
func TestSettingRangeIsValidates(t *testing.T) {
	n := 0
	for _, s := range DeploymentSettings() {
		r, ok := SettingRange(s.Key)
		if !ok {
			continue
		}
		n++
		step := 1.0
		if s.TypeName() == "float" {
			step = 1e-9
		}
		for _, c := range []struct {
			v    float64
			pass bool
		}{{r.Min, !r.MinExclusive}, {r.Max, true}, {r.Min - step, false}, {r.Max + step, false}} {
			d := DefaultDeployment()
			// Room for the step-budget checks between the two knobs.
			d.Serving.MaxNumSeqs, d.Serving.MaxNumBatchedTokens = 1, limits.MaxBatchedTokens
			if err := d.Set(s.Key, strconv.FormatFloat(c.v, 'f', -1, 64)); err != nil {
				t.Fatal(err)
			}
			err := d.Validate()
			var fe *FieldError
			switch {
			case c.pass && err != nil && errors.As(err, &fe) && fe.Key == s.Key:
				t.Errorf("%s = %g: %v, want in range", s.Key, c.v, err)
			case !c.pass && (!errors.As(err, &fe) || fe.Key != s.Key):
				t.Errorf("%s = %g: %v, want an error naming %s", s.Key, c.v, err, s.Key)
			}
		}
	}
	if n < 10 {
		t.Errorf("%d ranged settings", n)
	}
}
