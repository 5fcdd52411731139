package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cast"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

// layered resolves settings with roofsim's precedence: flags that were set
// > environment (SIM_<NAME>, dashes as underscores) > the config or workload
// file > built-in defaults. Values that fail to parse are errors naming
// where they came from, never silent zeros.
type layered struct {
	v   *viper.Viper
	cmd *cobra.Command
}

// newLayered binds cmd's flags and the SIM_ environment; file holds the
// values the config/workload file sets (keys as flag names).
func newLayered(cmd *cobra.Command, file map[string]any) (*layered, error) {
	v := viper.New()
	v.SetEnvPrefix("SIM")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(cmd.Flags()); err != nil {
		return nil, err
	}
	if len(file) > 0 {
		if err := v.MergeConfigMap(file); err != nil {
			return nil, err
		}
	}
	return &layered{v: v, cmd: cmd}, nil
}

// origin says where key's value comes from, for error messages.
func (l *layered) origin(key string) string {
	if f := l.cmd.Flags().Lookup(key); f != nil && f.Changed {
		return "--" + key
	}
	env := "SIM_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
	if l.v.IsSet(key) {
		if _, ok := lookupEnv(env); ok {
			return env
		}
	}
	return key
}

func (l *layered) String(key string) string { return cast.ToString(l.v.Get(key)) }

func (l *layered) Int(key string) (int, error) {
	n, err := cast.ToIntE(l.v.Get(key))
	if err != nil {
		return 0, fmt.Errorf("%s: not an integer: %v", l.origin(key), l.v.Get(key))
	}
	return n, nil
}

func (l *layered) Uint64(key string) (uint64, error) {
	n, err := cast.ToUint64E(l.v.Get(key))
	if err != nil {
		return 0, fmt.Errorf("%s: not a non-negative integer: %v", l.origin(key), l.v.Get(key))
	}
	return n, nil
}

func (l *layered) Float(key string) (float64, error) {
	f, err := cast.ToFloat64E(l.v.Get(key))
	if err != nil {
		return 0, fmt.Errorf("%s: not a number: %v", l.origin(key), l.v.Get(key))
	}
	return f, nil
}

func (l *layered) Bool(key string) (bool, error) {
	b, err := cast.ToBoolE(l.v.Get(key))
	if err != nil {
		return false, fmt.Errorf("%s: not a boolean: %v", l.origin(key), l.v.Get(key))
	}
	return b, nil
}

// IsSet reports whether key was given by a flag, the environment or the file.
func (l *layered) IsSet(key string) bool {
	if f := l.cmd.Flags().Lookup(key); f != nil && f.Changed {
		return true
	}
	env := "SIM_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
	if _, ok := lookupEnv(env); ok {
		return true
	}
	return l.v.InConfig(key)
}
