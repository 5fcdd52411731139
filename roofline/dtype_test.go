package roofline

import (
	"errors"
	"slices"
	"testing"
)

// Every catalog precision parses as a DType; aliases and group-quantised
// integers are accepted as written; "" is the zero DType; an unknown name is
// an *UnknownPrecisionError listing the catalog's names.
func TestParseDType(t *testing.T) {
	for _, name := range append(DTypes(), "bfloat16", "Q4_K_M", "int4_g128_zp", "") {
		d, err := ParseDType(name)
		if err != nil || string(d) != name {
			t.Errorf("ParseDType(%q) = %q, %v", name, d, err)
		}
		var back DType
		if b, _ := d.MarshalText(); back.UnmarshalText(b) != nil || back != d {
			t.Errorf("text round trip of %q gave %q", d, back)
		}
	}
	_, err := ParseDType("fp7")
	var ue *UnknownPrecisionError
	if !errors.As(err, &ue) || ue.Name != "fp7" || !slices.Equal(ue.Known, DTypes()) {
		t.Fatalf(`ParseDType("fp7") = %v, want an *UnknownPrecisionError listing %v`, err, DTypes())
	}
	d := DType("bf16")
	if err := d.UnmarshalText([]byte("fp7")); !errors.As(err, &ue) || d != "bf16" {
		t.Errorf("UnmarshalText(fp7) = %v, left %q", err, d)
	}
}
