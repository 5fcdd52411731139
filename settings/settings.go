package settings

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Setting is one leaf field of a settings struct (Deployment, or Spec with its seed and
// duration) as the reflection over its tags sees it: the key that the workload file,
// the command line (--<last element with dashes>, SIM_*), a sweep grid and the web
// view all name it by, its help text and where it sits in the struct. Fields are found
// by SettingsOf; nothing lists them by hand.
type Setting struct {
	// Key is the full key in a workload file: "tp", "serving.max_num_seqs".
	Key string
	// Help is the field's one-line help tag.
	Help string
	// Index is the field's index path (reflect.Value.FieldByIndex).
	Index []int
	// Type is the field's Go type: a string, int, uint64, float64, bool or Duration.
	Type reflect.Type
	// FlagName, when set (a leaf field's own flag tag), replaces the flag
	// name derived from the key: for a nested key whose last element alone
	// is too vague ("serving.speculative.method" is --speculative-method).
	FlagName string
	// flagPrefix is what the flag tags of the enclosing structs put before
	// the flag ("prefill-" for disaggregation.prefill.replicas), so two
	// settings whose keys end alike get distinct flags.
	flagPrefix string
}

var durationType = reflect.TypeFor[Duration]()

// IsTextType reports whether a setting of type t is one text value: t
// implements encoding.TextMarshaler and *t encoding.TextUnmarshaler (as
// engine.Engine does), so files, flags and grids give it as a string that
// t parses, and the reflection treats it as a leaf, not a nested struct.
func IsTextType(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) && t.Implements(reflect.TypeFor[encoding.TextMarshaler]())
}

// TypeName is the setting's value type in one word: "string" (text settings too),
// "int", "uint", "float", "bool" or "duration".
func (s Setting) TypeName() string {
	switch {
	case s.Type == durationType:
		return "duration"
	case s.Type.Kind() == reflect.Int:
		return "int"
	case s.Type.Kind() == reflect.Uint64:
		return "uint"
	case s.Type.Kind() == reflect.Float64:
		return "float"
	case s.Type.Kind() == reflect.Bool:
		return "bool"
	}
	return "string"
}

// Flag is the setting's command-line flag name, without dashes in front: the key's
// last element with underscores as dashes ("max-num-seqs"), after the flag tags of
// the structs it sits in ("prefill-replicas"); or the leaf's own flag tag (FlagName).
func (s Setting) Flag() string {
	if s.FlagName != "" {
		return s.FlagName
	}
	return s.flagPrefix + strings.ReplaceAll(s.Key[strings.LastIndex(s.Key, ".")+1:], "_", "-")
}

// SettingsOf lists the settings of the struct type t in field order: every exported
// leaf field with a mapstructure key and a help tag, nested structs contributing
// "<key>." prefixes (or none when squashed). It panics when t is not a struct.
func SettingsOf(t reflect.Type) []Setting {
	var out []Setting
	var walk func(t reflect.Type, prefix, flagPrefix string, index []int)
	walk = func(t reflect.Type, prefix, flagPrefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			name, opts, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != durationType && !IsTextType(f.Type) {
				fp := flagPrefix + f.Tag.Get("flag")
				if opts == "squash" {
					walk(f.Type, prefix, fp, idx)
				} else if name != "" {
					walk(f.Type, prefix+name+".", fp, idx)
				}
				continue
			}
			help, ok := f.Tag.Lookup("help")
			if !ok || name == "" {
				continue
			}
			out = append(out, Setting{Key: prefix + name, Help: help, Index: idx, Type: f.Type, FlagName: f.Tag.Get("flag"), flagPrefix: flagPrefix})
		}
	}
	walk(t, "", "", nil)
	return out
}

// DeploymentSettings lists the settings of Deployment in field order.
func DeploymentSettings() []Setting { return SettingsOf(reflect.TypeFor[Deployment]()) }

// UnknownSettingError is a key that names no setting of Deployment. Close lists the
// keys it may be a misspelling or a shortening of; Known every key.
type UnknownSettingError struct {
	Key          string
	Close, Known []string
}

func (e *UnknownSettingError) Error() string {
	if len(e.Close) > 0 {
		return fmt.Sprintf("unknown setting %q (did you mean %s?)", e.Key, strings.Join(e.Close, " or "))
	}
	return fmt.Sprintf("unknown setting %q (settings: %s)", e.Key, strings.Join(e.Known, ", "))
}

// LookupSetting returns the setting of Deployment with key key, or an
// *UnknownSettingError.
func LookupSetting(key string) (Setting, error) {
	all := DeploymentSettings()
	for _, s := range all {
		if s.Key == key {
			return s, nil
		}
	}
	e := &UnknownSettingError{Key: key}
	for _, s := range all {
		e.Known = append(e.Known, s.Key)
		last := s.Key[strings.LastIndex(s.Key, ".")+1:]
		if key != "" && (strings.HasSuffix(s.Key, "."+key) || editDistance(key, s.Key) <= 2 || editDistance(key, last) <= 2 || key == s.Flag()) {
			e.Close = append(e.Close, s.Key)
		}
	}
	return Setting{}, e
}

// editDistance is the Levenshtein distance of a and b, in bytes; O(len(a) len(b)).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// TypeWord names the value type of the setting in the words of the settings' errors
// ("want an integer, got \"2.9\"").
func (s Setting) TypeWord() string { return TypeWord(s.TypeName()) }

// TypeWord names a value type given by Setting.TypeName in the words of the settings'
// errors; "" for a name it does not know.
func TypeWord(typeName string) string {
	switch typeName {
	case "int":
		return "an integer"
	case "uint":
		return "a non-negative integer"
	case "float":
		return "a number"
	case "bool":
		return "true or false"
	case "duration":
		return "a duration such as 90s or 10m"
	case "string":
		return "a string"
	}
	return ""
}

// ParseValue converts text to a value of type t exactly, the way the command line and
// the environment read a setting: integers without truncation ("2.9" is an error),
// durations as time.ParseDuration, booleans as strconv.ParseBool, text settings
// (IsTextType) by their UnmarshalText, strings unchanged.
func ParseValue(t reflect.Type, text string) (any, error) {
	switch {
	case IsTextType(t):
		v := reflect.New(t)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(text)); err != nil {
			return nil, err
		}
		return v.Elem().Interface(), nil
	case t == durationType:
		d, err := time.ParseDuration(text)
		return Duration(d), err
	case t.Kind() == reflect.Int:
		return strconv.Atoi(text)
	case t.Kind() == reflect.Uint64:
		return strconv.ParseUint(text, 10, 64)
	case t.Kind() == reflect.Float64:
		return strconv.ParseFloat(text, 64)
	case t.Kind() == reflect.Bool:
		return strconv.ParseBool(text)
	case t.Kind() == reflect.String:
		return text, nil
	}
	return nil, fmt.Errorf("no text form for %s", t)
}

// Parse reads the setting's value from its text form (ParseValue); text that does
// not parse is a *FieldError naming the key: "want an integer, got \"x\"", or a text
// setting's own reason.
func (s Setting) Parse(text string) (any, error) {
	v, err := ParseValue(s.Type, text)
	switch {
	case err != nil && IsTextType(s.Type):
		return nil, &FieldError{Key: s.Key, Reason: err.Error(), Err: err}
	case err != nil:
		return nil, &FieldError{Key: s.Key, Reason: fmt.Sprintf("want %s, got %q", s.TypeWord(), text)}
	}
	return v, nil
}

// Text is the text form of a setting's value v, which Parse reads back: a text
// setting's MarshalText, a float's shortest exact decimal, else fmt's.
func Text(v any) string {
	switch x := v.(type) {
	case encoding.TextMarshaler:
		b, err := x.MarshalText()
		if err != nil {
			panic(err) // a setting's own value always writes
		}
		return string(b)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// Set sets the setting with key key from its text form (Setting.Parse). An unknown
// key is an *UnknownSettingError; text that does not parse a *FieldError naming the
// key. Set does not validate the result: call Validate.
func (d *Deployment) Set(key, text string) error {
	s, err := LookupSetting(key)
	if err != nil {
		return err
	}
	v, err := s.Parse(text)
	if err != nil {
		return err
	}
	reflect.ValueOf(d).Elem().FieldByIndex(s.Index).Set(reflect.ValueOf(v).Convert(s.Type))
	return nil
}

// Get returns the value of the setting with key key, or an *UnknownSettingError.
func (d *Deployment) Get(key string) (any, error) {
	s, err := LookupSetting(key)
	if err != nil {
		return nil, err
	}
	return reflect.ValueOf(d).Elem().FieldByIndex(s.Index).Interface(), nil
}

// Range is the closed (or, with MinExclusive, half-open) interval a numeric setting's
// value must lie in, in the setting's own unit.
type Range struct {
	Min, Max     float64
	MinExclusive bool
}

// SettingRange returns the interval Validate enforces on the numeric setting with key
// key, and false when it checks none.
func SettingRange(key string) (Range, bool) {
	d := DefaultDeployment()
	for _, b := range d.intBounds() {
		if b.key == key {
			return Range{Min: float64(b.lo), Max: float64(b.hi)}, true
		}
	}
	if key == keyGPUMemoryUtilization {
		return Range{Min: 0, Max: 1, MinExclusive: true}, true
	}
	if r, ok := speculativeRange(key); ok {
		return r, true
	}
	return Range{}, false
}
