package settings

import (
	"encoding/json"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a non-negative span of simulated time written in YAML as a Go duration
// string ("600s", "10m", "1.5h"). The zero value means "unset" wherever a field is optional.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// NS returns d in nanoseconds.
func (d Duration) NS() int64 { return int64(d) }

// Seconds returns d in seconds.
func (d Duration) Seconds() float64 { return time.Duration(d).Seconds() }

// String formats d like time.Duration.
func (d Duration) String() string { return time.Duration(d).String() }

// parseDuration parses a Go duration string and rejects negative values.
func parseDuration(s string) (Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q (want a Go duration such as \"600s\" or \"10m\")", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("duration %q must not be negative", s)
	}
	return Duration(v), nil
}

// UnmarshalYAML implements yaml.Unmarshaler. Its errors carry no line: the strict decoder
// (internal/yamlstrict) adds the line and the field path.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want a duration string such as \"600s\"")
	}
	v, err := parseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML implements yaml.Marshaler, writing the Go duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes the Go duration string ("1m0s"), as YAML does.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON reads the Go duration string MarshalJSON writes, so a
// run.json that records a duration reads back.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"600s\"")
	}
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
