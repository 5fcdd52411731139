package hardware

import (
	"fmt"
	"strings"
)

// ProfileStatus says how a GPU was priced: from a calibrated kernel
// profile, from the built-in default efficiencies, or from the calibrated
// profile of another GPU of the same architecture that it borrows. Its text
// form is "calibrated", "defaults" or "borrowed:<gpu>"; the zero value is
// unknown (a result that simulated nothing) and writes as "".
type ProfileStatus struct {
	kind profileStatusKind
	// from is the GPU whose profile is borrowed (kind statusBorrowed).
	from string
}

type profileStatusKind uint8

const (
	statusUnknown profileStatusKind = iota
	statusCalibrated
	statusDefaults
	statusBorrowed
)

// The statuses of a GPU's own profile.
var (
	// StatusCalibrated is a GPU priced from its own calibrated profile.
	StatusCalibrated = ProfileStatus{kind: statusCalibrated}
	// StatusDefaults is a GPU priced from the built-in default
	// efficiencies.
	StatusDefaults = ProfileStatus{kind: statusDefaults}
)

// borrowedPrefix starts the text form of a borrowed status.
const borrowedPrefix = "borrowed:"

// StatusBorrowed is a GPU priced from the calibrated profile of gpu, a GPU
// of the same architecture.
func StatusBorrowed(gpu string) ProfileStatus {
	return ProfileStatus{kind: statusBorrowed, from: gpu}
}

// Status is how a GPU with this profile is priced: calibrated or defaults.
func (p *Profile) Status() ProfileStatus {
	if p.BorrowedFrom != "" {
		return StatusBorrowed(p.BorrowedFrom)
	}
	if p.Calibrated {
		return StatusCalibrated
	}
	return StatusDefaults
}

// IsZero reports whether s is the unknown status.
func (s ProfileStatus) IsZero() bool { return s.kind == statusUnknown }

// Calibrated reports whether the rates come from a calibrated profile, the
// GPU's own or a borrowed one.
func (s ProfileStatus) Calibrated() bool {
	return s.kind == statusCalibrated || s.kind == statusBorrowed
}

// Borrowed returns the GPU whose profile is borrowed, and whether s is a
// borrowed status.
func (s ProfileStatus) Borrowed() (string, bool) {
	return s.from, s.kind == statusBorrowed
}

// String is the text form: "calibrated", "defaults", "borrowed:<gpu>", or
// "" for the zero value.
func (s ProfileStatus) String() string {
	switch s.kind {
	case statusCalibrated:
		return "calibrated"
	case statusDefaults:
		return "defaults"
	case statusBorrowed:
		return borrowedPrefix + s.from
	}
	return ""
}

// MarshalText implements encoding.TextMarshaler.
func (s ProfileStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; see ParseProfileStatus.
func (s *ProfileStatus) UnmarshalText(b []byte) error {
	v, err := ParseProfileStatus(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ProfileStatusError is a profile status that is not "calibrated",
// "defaults" or "borrowed:<gpu>" with a GPU name.
type ProfileStatusError struct {
	Value string
}

func (e *ProfileStatusError) Error() string {
	return fmt.Sprintf("gpu_profile_status %q: want calibrated, defaults or borrowed:<gpu>", e.Value)
}

// ParseProfileStatus reads a status's text form; "" is the zero value.
func ParseProfileStatus(v string) (ProfileStatus, error) {
	switch v {
	case "":
		return ProfileStatus{}, nil
	case "calibrated":
		return StatusCalibrated, nil
	case "defaults":
		return StatusDefaults, nil
	}
	if g, ok := strings.CutPrefix(v, borrowedPrefix); ok && g != "" && strings.TrimSpace(g) == g {
		return StatusBorrowed(g), nil
	}
	return ProfileStatus{}, &ProfileStatusError{Value: v}
}
