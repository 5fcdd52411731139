package traces

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// csvEncoder encodes one record as one RFC 4180 line. Numbers are never
// quoted; strings are quoted only when they contain a comma, a quote, CR or
// LF. NaN floats are empty fields.
type csvEncoder struct {
	buf   []byte
	first bool
	err   error
}

func (e *csvEncoder) begin() { e.buf, e.first, e.err = e.buf[:0], true, nil }

func (e *csvEncoder) sep() {
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
}

func (e *csvEncoder) uintCol(_ string, p *uint64) { e.sep(); e.buf = strconv.AppendUint(e.buf, *p, 10) }
func (e *csvEncoder) intCol(_ string, p *int) {
	e.sep()
	e.buf = strconv.AppendInt(e.buf, int64(*p), 10)
}

func (e *csvEncoder) floatCol(name string, p *float64) {
	e.sep()
	x := *p
	switch {
	case math.IsNaN(x):
	case math.IsInf(x, 0):
		if e.err == nil {
			e.err = infError(name, x)
		}
	default:
		e.buf = strconv.AppendFloat(e.buf, x, 'g', -1, 64)
	}
}

func (e *csvEncoder) stringCol(_ string, p *string) {
	e.sep()
	s := *p
	if !strings.ContainsAny(s, ",\"\r\n") {
		e.buf = append(e.buf, s...)
		return
	}
	e.buf = append(e.buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			e.buf = append(e.buf, '"')
		}
		e.buf = append(e.buf, s[i])
	}
	e.buf = append(e.buf, '"')
}

func (e *csvEncoder) end() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	e.buf = append(e.buf, '\n')
	return e.buf, nil
}

func (e *csvEncoder) header(cols []string) []byte {
	return []byte(strings.Join(cols, ",") + "\n")
}

func infError(column string, x float64) error {
	return fmt.Errorf("column %q: %v is not allowed (want a finite number or NaN)", column, x)
}

// csvDecoder parses the current row of a table through the column visitor;
// cells are read by column name, exactly as written, and the first bad cell
// is recorded in the table (file:line:column, internal/table).
type csvDecoder struct{ t *table.Reader }

func (d *csvDecoder) next(name string) (string, bool) {
	if d.t.Err() != nil {
		return "", false
	}
	return d.t.Raw(name), true
}

func (d *csvDecoder) fail(name, want, got string) {
	d.t.Failf(name, "%s is not %s", safefile.Quote(got), want)
}

func (d *csvDecoder) uintCol(name string, p *uint64) {
	if s, ok := d.next(name); ok {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			d.fail(name, "an unsigned integer", s)
			return
		}
		*p = v
	}
}

func (d *csvDecoder) intCol(name string, p *int) {
	if s, ok := d.next(name); ok {
		v, err := strconv.Atoi(s)
		if err != nil {
			d.fail(name, "an integer", s)
			return
		}
		*p = v
	}
}

func (d *csvDecoder) floatCol(name string, p *float64) {
	if s, ok := d.next(name); ok {
		if s == "" {
			*p = math.NaN()
			return
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			d.fail(name, "a number", s)
			return
		}
		if math.IsInf(v, 0) {
			d.t.Failf(name, "%v is not allowed (want a finite number or NaN)", v)
			return
		}
		*p = v
	}
}

func (d *csvDecoder) stringCol(name string, p *string) {
	if s, ok := d.next(name); ok {
		*p = s
	}
}

// readCSV reads a CSV stream written by a CSV writer: the header must match
// the column list exactly, and every row must have one field per column.
// Errors read "csv:line:column: column: reason" (internal/table).
func readCSV[T any, P recordPtr[T]](r io.Reader) ([]T, error) {
	want := columnsOf[T, P]()
	t, err := table.Open(r, "csv", table.Options{})
	if errors.Is(err, table.ErrEmpty) {
		return nil, fmt.Errorf("csv:1: empty input: missing header row (%s)", strings.Join(want, ","))
	}
	if err != nil {
		return nil, err
	}
	header := t.Header()
	if len(header) != len(want) {
		return nil, fmt.Errorf("csv:1: header has %d columns, want %d (%s)", len(header), len(want), strings.Join(want, ","))
	}
	for i := range want {
		if header[i] != want[i] {
			return nil, fmt.Errorf("csv:1: header column %d is %s, want %q", i+1, safefile.Quote(header[i]), want[i])
		}
	}
	d := csvDecoder{t: t}
	out, err := table.Collect(t, func(*table.Reader) T {
		var rec T
		P(&rec).visitColumns(&d)
		return rec
	})
	if len(out) == 0 {
		out = nil // no records: nil, as readJSONL returns
	}
	return out, err
}
