package hardware

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Arch is a GPU's compute architecture as CUDA names it: "sm" and the
// compute capability without its dot ("sm90" for compute capability 9.0).
// Serving engines choose kernels by architecture, not by product name: a
// kernel built for sm90 runs on every Hopper part. The empty Arch means
// unknown; an engine then takes no architecture-specific kernel path.
type Arch string

// Architectures of the catalog's GPUs and the other parts engines target.
const (
	ArchSM70  Arch = "sm70"  // Volta: V100
	ArchSM75  Arch = "sm75"  // Turing: T4
	ArchSM80  Arch = "sm80"  // Ampere data centre: A100
	ArchSM86  Arch = "sm86"  // Ampere: A10, A40, RTX 3090
	ArchSM89  Arch = "sm89"  // Ada Lovelace: L4, L40S, RTX 4090
	ArchSM90  Arch = "sm90"  // Hopper: H100, H200
	ArchSM100 Arch = "sm100" // Blackwell data centre: B200
	ArchSM103 Arch = "sm103" // Blackwell Ultra: B300
	ArchSM120 Arch = "sm120" // Blackwell workstation: RTX PRO 6000 Blackwell
	ArchSM121 Arch = "sm121" // Blackwell GB10 (DGX Spark)
)

// Archs returns the known architectures, oldest first. The slice is fresh
// on each call.
func Archs() []Arch {
	return []Arch{ArchSM70, ArchSM75, ArchSM80, ArchSM86, ArchSM89, ArchSM90, ArchSM100, ArchSM103, ArchSM120, ArchSM121}
}

// ArchError is an architecture name that is not known.
type ArchError struct {
	// Value is the name as given.
	Value string
}

func (e *ArchError) Error() string {
	known := make([]string, 0, len(Archs()))
	for _, a := range Archs() {
		known = append(known, string(a))
	}
	return fmt.Sprintf("unknown architecture %q (known: %s)", e.Value, strings.Join(known, ", "))
}

// ParseArch reads an architecture name, case-insensitively ("SM90" is
// sm90). An unknown name is an *ArchError listing the known ones; "" is the
// unknown Arch and no error.
func ParseArch(s string) (Arch, error) {
	a := Arch(strings.ToLower(strings.TrimSpace(s)))
	if err := a.Validate(); err != nil {
		return "", &ArchError{Value: s}
	}
	return a, nil
}

// UnmarshalText reads a GPU file's arch: through ParseArch, so "SM90" is
// sm90 and an unknown name is an *ArchError.
func (a *Arch) UnmarshalText(text []byte) error {
	v, err := ParseArch(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// Validate reports an *ArchError when a is neither empty nor known.
func (a Arch) Validate() error {
	if a == "" || slices.Contains(Archs(), a) {
		return nil
	}
	return &ArchError{Value: string(a)}
}

// Major is the CUDA compute capability's major version (12 for sm120 and
// sm121, 8 for sm80, sm86 and sm89), 0 for an empty or malformed Arch.
// GPUs of one major version share an architecture family: tensor-core
// instruction set and kernel libraries target it as a whole.
func (a Arch) Major() int {
	n, err := strconv.Atoi(strings.TrimPrefix(string(a), "sm"))
	if err != nil || n < 10 {
		return 0
	}
	return n / 10
}
