package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// numberKind is what text a strictNumber flag takes.
type numberKind int

const (
	signedDecimal   numberKind = iota // an int: base 10, optional sign
	unsignedDecimal                   // a uint: base 10
	finiteFloat                       // a float: not NaN, not ±Inf
)

// strictNumber is a numeric flag that takes plain numbers only. pflag parses
// integers with base 0, so "0x2", "0o7", "0b1" and "1_0" would otherwise be
// accepted as 2, 7, 1 and 10, and floats with strconv.ParseFloat, which
// takes "NaN", "Inf" and "0x1p3"; here they are refused like any other text that is
// not a number, on the command line and from SIM_<FLAG> alike.
type strictNumber struct {
	pflag.Value
	kind numberKind
}

// Set refuses text that is not a plain number of the flag's kind, then sets
// the flag.
func (s strictNumber) Set(text string) error {
	var err error
	switch s.kind {
	case signedDecimal:
		_, err = strconv.ParseInt(text, 10, 64)
	case unsignedDecimal:
		_, err = strconv.ParseUint(text, 10, 64)
	case finiteFloat:
		var x float64
		x, err = strconv.ParseFloat(text, 64)
		if err == nil && (math.IsNaN(x) || math.IsInf(x, 0) || strings.ContainsAny(text, "xX_")) {
			err = strconv.ErrSyntax
		}
	}
	if err != nil {
		return fmt.Errorf("%q is not a plain decimal number", text)
	}
	return s.Value.Set(text)
}

// strictNumbers makes every integer and float flag of cmd and its
// subcommands take plain decimal numbers only (strictNumber). Flags keep
// their type name, so errors still read "want an integer".
func strictNumbers(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(strictNumber); done {
			return
		}
		switch f.Value.Type() {
		case "int", "int8", "int16", "int32", "int64":
			f.Value = strictNumber{Value: f.Value, kind: signedDecimal}
		case "uint", "uint8", "uint16", "uint32", "uint64":
			f.Value = strictNumber{Value: f.Value, kind: unsignedDecimal}
		case "float32", "float64":
			f.Value = strictNumber{Value: f.Value, kind: finiteFloat}
		}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		strictNumbers(c)
	}
}
