package main

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Settings come from one struct, workload.Spec: the fields of its embedded
// workload.Deployment and its seed and duration, each marked by a help tag.
// Every such field gets a flag, an environment variable and a workload-file
// key derived from its mapstructure key, so the three always agree:
//
//	key (file)              flag                      environment
//	tp                      --tp                      SIM_TP
//	serving.max_num_seqs    --max-num-seqs            SIM_MAX_NUM_SEQS
//
// Precedence: flags > SIM_* environment > the workload file > the defaults
// (workload.DefaultDeployment). The environment is applied to every
// command's flags before it runs (applyEnv), so SIM_<FLAG> works for every
// flag, settings or not.

// setting is one leaf field of workload.Spec that a command line may set.
type setting struct {
	Key   string // full key in the workload file: "tp", "serving.max_num_seqs"
	Flag  string // flag name: the last key element with dashes, "max-num-seqs"
	Help  string
	Index []int // field index path in workload.Spec (reflect.Value.FieldByIndex)
	Type  reflect.Type
}

// envName is the environment variable of a flag: SIM_ and the name in upper
// case with dashes as underscores.
func envName(flag string) string {
	return "SIM_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// settingAnnotation marks a flag that sets a setting; its value is the key.
const settingAnnotation = "roofsim-setting"

// envAnnotation marks a flag whose value came from the environment; its
// value is the variable's name.
const envAnnotation = "roofsim-env"

var durationType = reflect.TypeFor[workload.Duration]()

// isText reports whether a setting of type t is one text value
// (encoding.TextUnmarshaler and TextMarshaler, like engine.Engine): a string
// flag whose value t parses.
func isText(t reflect.Type) bool { return workload.IsTextType(t) }

// settingText is a setting's value as a flag or viper default holds it: the
// text form of a text setting, else v itself.
func settingText(v reflect.Value) any {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok && isText(v.Type()) {
		b, err := m.MarshalText()
		if err != nil {
			panic(err) // a setting's own value always writes
		}
		return string(b)
	}
	return v.Interface()
}

// textValueError is a text setting's value that its type did not accept.
type textValueError struct {
	Type reflect.Type
	Err  error
}

func (e *textValueError) Error() string { return e.Err.Error() }

// settings lists the settings of workload.Spec in field order
// (workload.SettingsOf).
func settings() []setting {
	var out []setting
	for _, s := range workload.SettingsOf(reflect.TypeFor[workload.Spec]()) {
		out = append(out, setting{Key: s.Key, Flag: s.Flag(), Help: s.Help, Index: s.Index, Type: s.Type})
	}
	return out
}

// addSettingFlags registers a flag for every setting except those named in
// skip (flag names), with the library defaults shown in the help.
func addSettingFlags(cmd *cobra.Command, skip ...string) {
	def := reflect.ValueOf(workload.Spec{Deployment: workload.DefaultDeployment()})
	fs := cmd.Flags()
	for _, s := range settings() {
		if slices.Contains(skip, s.Flag) {
			continue
		}
		v := def.FieldByIndex(s.Index)
		switch {
		case s.Type == durationType:
			fs.Duration(s.Flag, time.Duration(v.Int()), s.Help)
		case isText(s.Type):
			fs.String(s.Flag, settingText(v).(string), s.Help)
		case s.Type.Kind() == reflect.String:
			fs.String(s.Flag, v.String(), s.Help)
		case s.Type.Kind() == reflect.Int:
			fs.Int(s.Flag, int(v.Int()), s.Help)
		case s.Type.Kind() == reflect.Uint64:
			fs.Uint64(s.Flag, v.Uint(), s.Help)
		case s.Type.Kind() == reflect.Float64:
			fs.Float64(s.Flag, v.Float(), s.Help)
		case s.Type.Kind() == reflect.Bool:
			fs.Bool(s.Flag, v.Bool(), s.Help)
		default:
			panic(fmt.Sprintf("setting %s: no flag for type %s", s.Key, s.Type))
		}
		if err := fs.SetAnnotation(s.Flag, settingAnnotation, []string{s.Key}); err != nil {
			panic(err)
		}
	}
}

// addSettingFlagsOnly registers the flags of the settings named in only
// (flag names), for commands that take a few deployment settings.
func addSettingFlagsOnly(cmd *cobra.Command, only ...string) {
	var skip []string
	for _, s := range settings() {
		if !slices.Contains(only, s.Flag) {
			skip = append(skip, s.Flag)
		}
	}
	addSettingFlags(cmd, skip...)
}

// applyEnv gives every flag of cmd that the command line did not set the
// value of its SIM_<FLAG> variable, if set and not empty, and marks it as
// coming from there. A value that does not parse is an error naming the variable.
func applyEnv(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		name := envName(f.Name)
		val, ok := lookupEnv(name)
		if !ok || val == "" {
			return
		}
		if e := cmd.Flags().Set(f.Name, val); e != nil {
			err = fmt.Errorf("%s: want %s, got %q", name, typeWord(f.Value.Type()), val)
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[envAnnotation] = []string{name}
	})
	return err
}

// typeWord names a flag's type for error messages, in the words the
// workload file's errors use ("tp: want an integer, got \"2.9\"").
func typeWord(t string) string {
	switch t {
	case "uint64":
		t = "uint"
	case "float64":
		t = "float"
	}
	if w := workload.TypeWord(t); w != "" {
		return w
	}
	return "a " + t
}

// parseFlagError turns pflag's error for a value that does not parse into the
// same words as the environment's and the workload file's.
func parseFlagError(err error) error {
	var ive *pflag.InvalidValueError
	if errors.As(err, &ive) {
		return fmt.Errorf("--%s: want %s, got %q", ive.GetFlag().Name, typeWord(ive.GetFlag().Value.Type()), ive.GetValue())
	}
	return err
}

// flagOrigin says where flag name's value came from: "--name" for the
// command line, "SIM_NAME" for the environment, or fallback (the setting's
// file key) when neither set it.
func flagOrigin(cmd *cobra.Command, name, fallback string) string {
	f := cmd.Flags().Lookup(name)
	if f == nil || !f.Changed {
		return fallback
	}
	if env := f.Annotations[envAnnotation]; len(env) > 0 {
		return env[0]
	}
	return "--" + name
}

// settingOrigin is flagOrigin for the setting with file key key.
func settingOrigin(cmd *cobra.Command, key string) string {
	for _, s := range settings() {
		if s.Key == key {
			if f := cmd.Flags().Lookup(s.Flag); f != nil && slices.Contains(f.Annotations[settingAnnotation], key) {
				return flagOrigin(cmd, s.Flag, key)
			}
		}
	}
	return key
}

// settingError rewrites a *workload.FieldError to name where the value came
// from (--tp, SIM_TP, or the file key tp); other errors pass unchanged.
func settingError(cmd *cobra.Command, err error) error {
	var fe *workload.FieldError
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("%s: %s", settingOrigin(cmd, fe.Key), fe.Reason)
}

// loadSpec is the one resolve step of every command that takes a workload
// file and deployment settings (run, sweep, and any later command that
// simulates): it reads workloadPath (strict YAML, validated; "" means no file:
// the default deployment and no clients), overlays the settings flags that
// addSettingFlags registered on cmd and that the command line or the SIM_*
// environment set, with viper, and checks the result with
// workload.Spec.ValidateSettings. Precedence: flags > environment > file >
// workload.DefaultDeployment. Errors name where the bad value came from
// (--tp, SIM_TP, or the file key tp).
func loadSpec(cmd *cobra.Command, workloadPath string) (*workload.Spec, error) {
	sp := &workload.Spec{Deployment: workload.DefaultDeployment()}
	if workloadPath != "" {
		var err error
		if sp, err = workload.Load(workloadPath); err != nil {
			return nil, err
		}
	}
	if f := cmd.Flags().Lookup("bench-args"); f != nil && f.Changed {
		if err := sp.ApplyBenchArgs(f.Value.String()); err != nil {
			return nil, fmt.Errorf("--bench-args: %w", err)
		}
	}
	v := viper.New()
	file := reflect.ValueOf(sp).Elem()
	for _, s := range settings() {
		v.SetDefault(s.Key, settingText(file.FieldByIndex(s.Index)))
		f := cmd.Flags().Lookup(s.Flag)
		if f != nil && slices.Contains(f.Annotations[settingAnnotation], s.Key) {
			if err := v.BindPFlag(s.Key, f); err != nil {
				return nil, err
			}
		}
	}
	out := *sp
	if err := v.Unmarshal(&out, func(c *mapstructure.DecoderConfig) {
		c.WeaklyTypedInput = false
		c.DecodeHook = strictStringHook
	}); err != nil {
		var te *textValueError
		if errors.As(err, &te) {
			for _, s := range settings() {
				if s.Type == te.Type {
					return nil, settingError(cmd, &workload.FieldError{Key: s.Key, Reason: te.Err.Error()})
				}
			}
		}
		return nil, fmt.Errorf("settings: %w", err)
	}
	if err := out.ValidateSettings(); err != nil {
		return nil, settingError(cmd, err)
	}
	return &out, nil
}

// strictStringHook converts the strings viper hands over for flags it does
// not type itself (uint64, float64, duration, text settings) to the field's
// type, exactly (no truncation of "2.9" to 2). A text setting's refusal is a
// *textValueError.
func strictStringHook(from, to reflect.Type, data any) (any, error) {
	str, ok := data.(string)
	if !ok || from.Kind() != reflect.String {
		return data, nil
	}
	if isText(to) {
		v := reflect.New(to)
		if err := v.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(str)); err != nil {
			return nil, &textValueError{Type: to, Err: err}
		}
		return v.Elem().Interface(), nil
	}
	switch to.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64, reflect.Bool:
		return workload.ParseValue(to, str)
	}
	return data, nil
}
