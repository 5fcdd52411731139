package main

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
)

// writeJSON prints v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newTable returns a tabwriter for aligned text tables; call Flush.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// fmtSI formats x with an SI prefix and unit, e.g. 1.23 T (FLOP/s).
func fmtSI(x float64, unit string) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	prefixes := []struct {
		f float64
		p string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}
	a := math.Abs(x)
	for _, p := range prefixes {
		if a >= p.f {
			return strconv.FormatFloat(x/p.f, 'f', 3, 64) + " " + p.p + unit
		}
	}
	return strconv.FormatFloat(x, 'f', 3, 64) + " " + unit
}

// fmtTime formats seconds in the most readable unit.
func fmtTime(s float64) string {
	switch a := math.Abs(s); {
	case math.IsNaN(s):
		return "-"
	case a >= 1:
		return strconv.FormatFloat(s, 'f', 3, 64) + " s"
	case a >= 1e-3:
		return strconv.FormatFloat(s*1e3, 'f', 3, 64) + " ms"
	default:
		return strconv.FormatFloat(s*1e6, 'f', 3, 64) + " us"
	}
}

// fmtF formats a float with fixed decimals ("-" for NaN).
func fmtF(x float64, dec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', dec, 64)
}

// atomicWriteFile writes data to path through a temporary file in the same
// directory and a rename, so a failure never leaves a partial file.
func atomicWriteFile(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return publish(tmp, path)
}

// publish makes a finished temporary file world-readable (CreateTemp makes
// it 0600) and renames it to path.
func publish(tmp, path string) error {
	if err := os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// atomicWriteBytes writes data to path atomically (see atomicWriteFile).
func atomicWriteBytes(path string, data []byte) error {
	return atomicWriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
