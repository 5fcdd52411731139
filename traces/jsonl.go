package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/roofsim/roofsim/internal/safefile"
)

// jsonEncoder encodes one record as one JSON object on one line, keys in
// column order. NaN floats are null.
type jsonEncoder struct {
	buf   []byte
	first bool
	err   error
}

func (e *jsonEncoder) begin() { e.buf, e.first, e.err = append(e.buf[:0], '{'), true, nil }

func (e *jsonEncoder) key(name string) {
	if !e.first {
		e.buf = append(e.buf, ',')
	}
	e.first = false
	e.buf = appendJSONString(e.buf, name)
	e.buf = append(e.buf, ':')
}

func (e *jsonEncoder) uintCol(n string, p *uint64) {
	e.key(n)
	e.buf = strconv.AppendUint(e.buf, *p, 10)
}
func (e *jsonEncoder) intCol(n string, p *int) {
	e.key(n)
	e.buf = strconv.AppendInt(e.buf, int64(*p), 10)
}
func (e *jsonEncoder) stringCol(n string, p *string) {
	e.key(n)
	e.buf = appendJSONString(e.buf, *p)
}

func (e *jsonEncoder) floatCol(name string, p *float64) {
	e.key(name)
	x := *p
	switch {
	case math.IsNaN(x):
		e.buf = append(e.buf, "null"...)
	case math.IsInf(x, 0):
		e.buf = append(e.buf, "null"...)
		if e.err == nil {
			e.err = infError(name, x)
		}
	default:
		// 'g' may produce "1e-05" or "1e+21": both are valid JSON numbers.
		e.buf = strconv.AppendFloat(e.buf, x, 'g', -1, 64)
	}
}

func (e *jsonEncoder) end() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	e.buf = append(e.buf, '}', '\n')
	return e.buf, nil
}

func (e *jsonEncoder) header([]string) []byte { return nil }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Control characters are
// escaped and invalid UTF-8 becomes U+FFFD, as encoding/json does; HTML
// characters are left alone.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			case c < 0x20:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

// jsonDecoder fills one record from the keys of one decoded JSON object,
// removing each key it uses so unknown keys can be reported afterwards.
type jsonDecoder struct {
	m   map[string]json.RawMessage
	err error
}

func (d *jsonDecoder) take(name string) ([]byte, bool) {
	if d.err != nil {
		return nil, false
	}
	raw, ok := d.m[name]
	if !ok {
		d.err = fmt.Errorf("column %q: missing", name)
		return nil, false
	}
	delete(d.m, name)
	return raw, true
}

func (d *jsonDecoder) fail(name, want string, raw []byte) {
	d.err = fmt.Errorf("column %q: %s is not %s", name, safefile.Clip(string(raw)), want)
}

func (d *jsonDecoder) uintCol(name string, p *uint64) {
	if raw, ok := d.take(name); ok {
		v, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			d.fail(name, "an unsigned integer", raw)
			return
		}
		*p = v
	}
}

func (d *jsonDecoder) intCol(name string, p *int) {
	if raw, ok := d.take(name); ok {
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			d.fail(name, "an integer", raw)
			return
		}
		*p = v
	}
}

func (d *jsonDecoder) floatCol(name string, p *float64) {
	if raw, ok := d.take(name); ok {
		if string(raw) == "null" {
			*p = math.NaN()
			return
		}
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil { // raw is valid JSON, so it is a JSON number here or not a number at all
			d.fail(name, "a number or null", raw)
			return
		}
		if math.IsInf(v, 0) {
			d.err = infError(name, v)
			return
		}
		*p = v
	}
}

func (d *jsonDecoder) stringCol(name string, p *string) {
	if raw, ok := d.take(name); ok {
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, p) != nil {
			d.fail(name, "a string", raw)
		}
	}
}

// maxJSONLine bounds one JSON Lines record, bytes.
const maxJSONLine = 1 << 20

// readJSONL reads JSON Lines: one object per non-blank line with exactly the
// record's columns as keys. Errors carry the line number.
func readJSONL[T any, P recordPtr[T]](r io.Reader) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	var out []T
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(text, &m); err != nil {
			return nil, fmt.Errorf("jsonl line %d: %w", line, err)
		}
		if m == nil {
			return nil, fmt.Errorf("jsonl line %d: want a JSON object, got %s", line, text)
		}
		d := jsonDecoder{m: m}
		var rec T
		P(&rec).visitColumns(&d)
		if d.err == nil && len(d.m) > 0 {
			keys := make([]string, 0, len(d.m))
			for k := range d.m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			d.err = fmt.Errorf("column %s: unknown", safefile.Quote(keys[0]))
		}
		if d.err != nil {
			return nil, fmt.Errorf("jsonl line %d: %w", line, d.err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("jsonl: a line is longer than %d bytes", maxJSONLine)
		}
		return nil, fmt.Errorf("jsonl: %w", err)
	}
	return out, nil
}
