package roofline

import (
	"errors"
	"slices"
	"testing"
)

// Every kernel path parses from its own name and writes it back; "" is the
// zero MoEKernel; an unknown name is an *UnknownMoEKernelError listing the
// known ones.
func TestParseMoEKernel(t *testing.T) {
	for _, name := range MoEKernels() {
		k, err := ParseMoEKernel(name)
		if err != nil || string(k) != name {
			t.Errorf("ParseMoEKernel(%q) = %q, %v", name, k, err)
		}
		var back MoEKernel
		if b, _ := k.MarshalText(); back.UnmarshalText(b) != nil || back != k {
			t.Errorf("text round trip of %q gave %q", k, back)
		}
	}
	if k, err := ParseMoEKernel(""); err != nil || k != "" {
		t.Errorf(`ParseMoEKernel("") = %q, %v`, k, err)
	}
	_, err := ParseMoEKernel("triton")
	var ue *UnknownMoEKernelError
	if !errors.As(err, &ue) || ue.Name != "triton" || !slices.Equal(ue.Known, MoEKernels()) {
		t.Fatalf(`ParseMoEKernel("triton") = %v, want an *UnknownMoEKernelError listing %v`, err, MoEKernels())
	}
	k := MoEKernelAuto
	if err := k.UnmarshalText([]byte("triton")); !errors.As(err, &ue) || k != MoEKernelAuto {
		t.Errorf("UnmarshalText(triton) = %v, left %q", err, k)
	}
}
