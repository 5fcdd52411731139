package aic

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/roofsim/roofsim/internal/safefile"
)

// Rows is one Parquet table read whole: its column names in file order
// and one value per column per row.
type Rows struct {
	// Path is the file read; SHA256 the hex SHA-256 of its bytes.
	Path, SHA256 string
	Columns      []string
	Values       [][]parquet.Value
	index        map[string]int
}

// Len is the number of rows.
func (r *Rows) Len() int { return len(r.Values) }

// Col is the index of column name, or -1 when the table lacks it.
func (r *Rows) Col(name string) int {
	if i, ok := r.index[name]; ok {
		return i
	}
	return -1
}

// ColumnError is a value of a column that is missing, null or of another
// type than the reader asks for. Row counts from 1.
type ColumnError struct {
	Path, Column string
	Row          int
	Reason       string
}

func (e *ColumnError) Error() string {
	if e.Row == 0 {
		return fmt.Sprintf("%s: column %s: %s", e.Path, e.Column, e.Reason)
	}
	return fmt.Sprintf("%s: row %d: column %s: %s", e.Path, e.Row, e.Column, e.Reason)
}

// value returns row i's value of column name (i from 0), or a
// *ColumnError when the column is missing or the value null.
func (r *Rows) value(i int, name string) (parquet.Value, error) {
	c := r.Col(name)
	if c < 0 {
		return parquet.Value{}, &ColumnError{Path: r.Path, Column: name, Reason: "missing"}
	}
	v := r.Values[i][c]
	if v.IsNull() {
		return v, &ColumnError{Path: r.Path, Column: name, Row: i + 1, Reason: "null"}
	}
	return v, nil
}

// Int is row i's integer value of column name (INT32 or INT64).
func (r *Rows) Int(i int, name string) (int64, error) {
	v, err := r.value(i, name)
	if err != nil {
		return 0, err
	}
	switch v.Kind() {
	case parquet.Int32:
		return int64(v.Int32()), nil
	case parquet.Int64:
		return v.Int64(), nil
	}
	return 0, &ColumnError{Path: r.Path, Column: name, Row: i + 1, Reason: fmt.Sprintf("want an integer, got %s", v.Kind())}
}

// Float is row i's value of column name as a float64 (DOUBLE, FLOAT or an
// integer).
func (r *Rows) Float(i int, name string) (float64, error) {
	v, err := r.value(i, name)
	if err != nil {
		return 0, err
	}
	switch v.Kind() {
	case parquet.Double:
		return v.Double(), nil
	case parquet.Float:
		return float64(v.Float()), nil
	case parquet.Int32, parquet.Int64:
		n, _ := r.Int(i, name)
		return float64(n), nil
	}
	return 0, &ColumnError{Path: r.Path, Column: name, Row: i + 1, Reason: fmt.Sprintf("want a number, got %s", v.Kind())}
}

// String is row i's text value of column name (BYTE_ARRAY).
func (r *Rows) String(i int, name string) (string, error) {
	v, err := r.value(i, name)
	if err != nil {
		return "", err
	}
	if v.Kind() != parquet.ByteArray {
		return "", &ColumnError{Path: r.Path, Column: name, Row: i + 1, Reason: fmt.Sprintf("want text, got %s", v.Kind())}
	}
	return v.String(), nil
}

// ReadTable reads the Parquet file at path whole, with its SHA-256.
// Memory is O(rows x columns).
func ReadTable(path string) (*Rows, error) {
	f, err := safefile.Open(path, safefile.Table)
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("aic: %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	ra, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("aic: %w", err)
	}
	defer ra.Close()
	pf, err := parquet.OpenFile(ra, st.Size())
	if err != nil {
		return nil, fmt.Errorf("aic: %s: %w", path, err)
	}
	out := &Rows{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), index: map[string]int{}}
	for i, fl := range pf.Schema().Fields() {
		out.Columns = append(out.Columns, fl.Name())
		out.index[fl.Name()] = i
	}
	rd := parquet.NewReader(pf)
	defer rd.Close()
	buf := make([]parquet.Row, 1024)
	for {
		n, err := rd.ReadRows(buf)
		for _, row := range buf[:n] {
			vals := make([]parquet.Value, len(out.Columns))
			for _, v := range row {
				if c := v.Column(); c >= 0 && c < len(vals) {
					vals[c] = v.Clone()
				}
			}
			out.Values = append(out.Values, vals)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("aic: %s: %w", path, err)
		}
	}
	return out, nil
}
