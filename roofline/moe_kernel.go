package roofline

import (
	"fmt"
	"slices"
	"strings"
)

// MoEKernel names a routed-expert kernel path (StepOptions.MoEKernel, the
// serving.moe_kernel setting). The zero MoEKernel ("") is the fused path.
// Its text form is the name; UnmarshalText accepts only the names
// MoEKernels lists, and "".
type MoEKernel string

// Routed-expert kernel paths (StepOptions.MoEKernel).
const (
	// MoEKernelFused is a fused grouped kernel that runs the touched
	// experts' token tiles only (vLLM's Triton fused_moe, Marlin or
	// FlashInfer), priced with the profile's fused-MoE entry
	// (hardware.FusedMoE). It is the default.
	MoEKernelFused MoEKernel = "fused"
	// MoEKernelDeepGEMM is vLLM's DeepGEMM contiguous path for 128x128
	// block-scaled fp8 experts, priced by deepGEMMExperts.
	MoEKernelDeepGEMM MoEKernel = "deepgemm"
	// MoEKernelAuto takes the path StepOptions.MoEKernelPolicy chooses:
	// what a serving engine release runs by default (MoEKernelPolicy).
	MoEKernelAuto MoEKernel = "auto"
)

// MoEKernels lists the named kernel paths, in the order a form offers them.
func MoEKernels() []string {
	return []string{string(MoEKernelAuto), string(MoEKernelFused), string(MoEKernelDeepGEMM)}
}

// UnknownMoEKernelError is a kernel path name that MoEKernels does not
// list; Known lists those it does.
type UnknownMoEKernelError struct {
	Name  string
	Known []string
}

func (e *UnknownMoEKernelError) Error() string {
	return fmt.Sprintf("must be one of %s, got %q", strings.Join(e.Known, ", "), e.Name)
}

// ParseMoEKernel returns the kernel path called name ("" is the zero
// MoEKernel), or an *UnknownMoEKernelError.
func ParseMoEKernel(name string) (MoEKernel, error) {
	k := MoEKernel(name)
	if err := k.Validate(); err != nil {
		return "", err
	}
	return k, nil
}

// Validate returns an *UnknownMoEKernelError when k is neither "" nor a
// name MoEKernels lists.
func (k MoEKernel) Validate() error {
	if known := MoEKernels(); k != "" && !slices.Contains(known, string(k)) {
		return &UnknownMoEKernelError{Name: string(k), Known: known}
	}
	return nil
}

// MarshalText implements encoding.TextMarshaler: the name.
func (k MoEKernel) MarshalText() ([]byte, error) { return []byte(k), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseMoEKernel.
func (k *MoEKernel) UnmarshalText(b []byte) error {
	v, err := ParseMoEKernel(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
