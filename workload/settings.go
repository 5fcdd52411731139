package workload

import (
	"reflect"

	"github.com/roofsim/roofsim/settings"
)

// The deployment settings are declared in package settings; these names
// forward to it for callers not yet moved there.
type (
	// Deployment is settings.Deployment.
	Deployment = settings.Deployment
	// Serving is settings.Serving.
	Serving = settings.Serving
	// FieldError is settings.FieldError.
	FieldError = settings.FieldError
	// Setting is settings.Setting.
	Setting = settings.Setting
	// UnknownSettingError is settings.UnknownSettingError.
	UnknownSettingError = settings.UnknownSettingError
	// Range is settings.Range.
	Range = settings.Range
	// Duration is settings.Duration.
	Duration = settings.Duration
)

// DefaultDeployment is settings.DefaultDeployment.
func DefaultDeployment() Deployment { return settings.DefaultDeployment() }

// IsTextType is settings.IsTextType.
func IsTextType(t reflect.Type) bool { return settings.IsTextType(t) }

// SettingsOf is settings.SettingsOf.
func SettingsOf(t reflect.Type) []Setting { return settings.SettingsOf(t) }

// DeploymentSettings is settings.DeploymentSettings.
func DeploymentSettings() []Setting { return settings.DeploymentSettings() }

// LookupSetting is settings.LookupSetting.
func LookupSetting(key string) (Setting, error) { return settings.LookupSetting(key) }

// TypeWord is settings.TypeWord.
func TypeWord(typeName string) string { return settings.TypeWord(typeName) }

// ParseValue is settings.ParseValue.
func ParseValue(t reflect.Type, text string) (any, error) { return settings.ParseValue(t, text) }

// Text is settings.Text.
func Text(v any) string { return settings.Text(v) }

// SettingRange is settings.SettingRange.
func SettingRange(key string) (Range, bool) { return settings.SettingRange(key) }
