// Package table reads CSV tables that have a header row: columns are found by
// name, cells are read as typed values, and every error names the position
// as file:line:column, then the column and the reason:
//
//	gemm.csv:3:5: n: want an integer, got "x"
//
// Reading order: Options and Open (the header), Reader.Next (the rows), the
// typed accessors (Text, Int, Float, ...), ReadAll (a whole table as a slice
// of rows), Error.
//
// A Reader keeps the first error and turns every later call into a no-op,
// so a row can be read field by field and checked once:
//
//	t, err := table.Open(r, "gemm.csv", table.Options{Required: []string{"m", "latency"}})
//	for t.Next() {
//		row := Row{M: t.IntMin("m", 1), Latency: t.Positive("latency")}
//		if t.Err() != nil {
//			break
//		}
//		...
//	}
//	if err := t.Err(); err != nil { ... }
package table

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
)

// ErrEmpty is wrapped by the error of Open on a table without a header row
// (an empty file, or one of comments only).
var ErrEmpty = errors.New("empty file")

// Error is a problem at one place of a table. Line and Column are 1-based
// (Column counts bytes, as encoding/csv does); 0 means unknown.
type Error struct {
	File         string
	Line, Column int
	// Col is the header name of the column concerned; "" when none.
	Col string
	Msg string
	// err is what the error wraps (ErrEmpty), if anything.
	err error
}

// Unwrap returns the sentinel the error stands for, if any (ErrEmpty).
func (e *Error) Unwrap() error { return e.err }

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Col != "" {
		b.WriteString(e.Col)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Options sets what a table's header must hold and how lines are read.
type Options struct {
	// Required columns must be in the header.
	Required []string
	// Known, when non-nil, lists every column the header may have besides
	// Required ones; any other column is an error.
	Known []string
	// Comment, when non-zero, starts a comment line (for example '#').
	Comment rune
	// FoldCase matches header names case-insensitively: they are
	// lower-cased before lookup, so Required, Known and the accessors use
	// lower-case names.
	FoldCase bool
	// TrimLeadingSpace ignores spaces before a field, so that a quoted
	// field may follow ", " (encoding/csv's option of that name).
	TrimLeadingSpace bool
	// Ragged accepts rows whose field count differs from the header's; a
	// column missing from a short row reads as empty. By default such a
	// row is an error.
	Ragged bool
}

// Reader reads the rows of one table.
type Reader struct {
	file   string
	cr     *csv.Reader
	header []string
	cols   map[string]int
	rec    []string
	line   int
	err    error
}

// Open reads the header row of the CSV table in r; file labels errors.
// Header names are trimmed of spaces and of a UTF-8 byte-order mark. A
// missing header, a missing required column, an unknown column (when
// Options.Known is set) and a repeated column are errors.
func Open(r io.Reader, file string, o Options) (*Reader, error) {
	cr := csv.NewReader(r)
	cr.Comment = o.Comment
	cr.TrimLeadingSpace = o.TrimLeadingSpace
	if o.Ragged {
		cr.FieldsPerRecord = -1
	}
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		msg := "empty file (no header row)"
		if len(o.Required) > 0 {
			msg = "empty file (want a header row with " + strings.Join(o.Required, ", ") + ")"
		}
		return nil, &Error{File: file, Line: 1, Msg: msg, err: ErrEmpty}
	}
	if err != nil {
		return nil, parseError(file, err)
	}
	t := &Reader{file: file, cr: cr, cols: make(map[string]int, len(header))}
	hline, _ := cr.FieldPos(0)
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if o.FoldCase {
			h = strings.ToLower(h)
		}
		_, col := cr.FieldPos(i)
		if _, dup := t.cols[h]; dup {
			return nil, &Error{File: file, Line: hline, Column: col, Msg: fmt.Sprintf("duplicate column %s", safefile.Quote(h))}
		}
		if o.Known != nil && !slices.Contains(o.Known, h) && !slices.Contains(o.Required, h) {
			known := append(slices.Clone(o.Required), o.Known...)
			return nil, &Error{File: file, Line: hline, Column: col, Msg: fmt.Sprintf("unknown column %s (known: %s)", safefile.Quote(h), strings.Join(known, ", "))}
		}
		t.cols[h] = i
		t.header = append(t.header, h)
	}
	for _, c := range o.Required {
		if _, ok := t.cols[c]; !ok {
			return nil, &Error{File: file, Line: hline, Msg: fmt.Sprintf("missing required column %q", c)}
		}
	}
	return t, nil
}

// ReadAll opens the table in r (see Open) and returns row's value for every
// record, in file order; row reads the current record through the Reader's
// accessors and may Failf. It stops at the first error. The result is
// non-nil (empty for a table without rows) when err is nil.
func ReadAll[T any](r io.Reader, file string, o Options, row func(t *Reader) T) ([]T, error) {
	t, err := Open(r, file, o)
	if err != nil {
		return nil, err
	}
	return Collect(t, row)
}

// Collect returns row's value for every remaining record of t (see
// ReadAll), for callers that check the header themselves after Open.
func Collect[T any](t *Reader, row func(t *Reader) T) ([]T, error) {
	out := []T{}
	for t.Next() {
		v := row(t)
		if t.Err() != nil {
			break
		}
		out = append(out, v)
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseError converts an encoding/csv error into an *Error.
func parseError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Line, Column: pe.Column, Msg: pe.Err.Error()}
	}
	return &Error{File: file, Msg: err.Error()}
}

// Header returns the trimmed header names in file order.
func (t *Reader) Header() []string { return slices.Clone(t.header) }

// Has reports whether the header has column col.
func (t *Reader) Has(col string) bool {
	_, ok := t.cols[col]
	return ok
}

// Next advances to the next row; it returns false at the end of the table
// or after an error (see Err).
func (t *Reader) Next() bool {
	if t.err != nil {
		return false
	}
	rec, err := t.cr.Read()
	if errors.Is(err, io.EOF) {
		return false
	}
	if err != nil {
		t.err = parseError(t.file, err)
		return false
	}
	t.rec = rec
	t.line, _ = t.cr.FieldPos(0)
	return true
}

// Err returns the first error met, or nil.
func (t *Reader) Err() error { return t.err }

// Line returns the current row's line.
func (t *Reader) Line() int { return t.line }

// File returns the name the table's errors carry.
func (t *Reader) File() string { return t.file }

// Failf records an error about column col of the current row (col "": the
// row as a whole), unless one is already recorded.
func (t *Reader) Failf(col, format string, args ...any) {
	if t.err != nil {
		return
	}
	e := &Error{File: t.file, Line: t.line, Col: col, Msg: fmt.Sprintf(format, args...)}
	if i, ok := t.cols[col]; ok && i < len(t.rec) {
		e.Line, e.Column = t.cr.FieldPos(i)
	}
	t.err = e
}

// Str returns the trimmed cell of column col, "" when the header lacks the
// column or the row is short of it (see Options.Ragged).
func (t *Reader) Str(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.rec) {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// Raw returns the cell of column col exactly as written (not trimmed), ""
// when the header lacks the column or the row is short of it.
func (t *Reader) Raw(col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(t.rec) {
		return ""
	}
	return t.rec[i]
}

// Text returns a cell that must not be empty.
func (t *Reader) Text(col string) string {
	s := t.Str(col)
	if s == "" {
		t.Failf(col, "empty")
	}
	return s
}

// Int returns a cell that must be an integer. Whole numbers written as
// floats ("128.0") are accepted; some tables write integers that way.
func (t *Reader) Int(col string) int {
	s := t.Str(col)
	v, err := strconv.Atoi(s)
	if err == nil {
		return v
	}
	f, ferr := strconv.ParseFloat(s, 64)
	if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		t.Failf(col, "want an integer, got %s", safefile.Quote(s))
		return 0
	}
	return int(f)
}

// IntMin returns a cell that must be an integer >= minV.
func (t *Reader) IntMin(col string, minV int) int {
	v := t.Int(col)
	if t.err == nil && v < minV {
		t.Failf(col, "must be >= %d, got %d", minV, v)
	}
	return v
}

// Float returns a cell that must be a finite number.
func (t *Reader) Float(col string) float64 {
	s := t.Str(col)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		t.Failf(col, "want a finite number, got %s", safefile.Quote(s))
		return 0
	}
	return v
}

// Positive returns a cell that must be a finite number > 0.
func (t *Reader) Positive(col string) float64 {
	v := t.Float(col)
	if t.err == nil && v <= 0 {
		t.Failf(col, "must be > 0, got %g", v)
	}
	return v
}
