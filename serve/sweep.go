package serve

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/sweep"
)

// maxDataFileBytes caps a file read from --data.
const maxDataFileBytes = 256 << 20

// sweepResponse is a `sim sweep` result table: its fixed columns (see
// docs/sweep.md) and one object per row, with null where a value does not
// apply. The Pareto and recommended flags come from the file.
type sweepResponse struct {
	Source  string            `json:"source"`
	Columns []string          `json:"columns"`
	Rows    []json.RawMessage `json:"rows"`
}

// handleSweep loads a sweep result: ?file=PATH under --data, or the body
// (Parquet or CSV, told apart by Parquet's "PAR1" magic).
func (s *Server) handleSweep(r *http.Request) (any, error) {
	var data []byte
	var name string
	if rel := r.URL.Query().Get("file"); rel != "" {
		p, err := s.data.resolve(rel)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return nil, errorf(http.StatusBadRequest, "file: %q is not a regular file", rel)
		}
		if st.Size() > maxDataFileBytes {
			return nil, errorf(http.StatusRequestEntityTooLarge, "file: %q is larger than %d bytes", rel, maxDataFileBytes)
		}
		if data, err = os.ReadFile(p); err != nil {
			return nil, errorf(http.StatusBadRequest, "file: %q: cannot read it", rel)
		}
		name = rel
	} else {
		var err error
		if data, err = readBody(r); err != nil {
			return nil, err
		}
		name = "upload"
	}
	if len(data) == 0 {
		return nil, errorf(http.StatusBadRequest, "sweep: empty file; give a `sim sweep --out` Parquet or `--csv` file")
	}
	var rows []json.RawMessage
	var err error
	if bytes.HasPrefix(data, []byte("PAR1")) {
		rows, err = parquetSweepRows(data)
	} else {
		rows, err = csvSweepRows(data)
	}
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "sweep %s: %v", name, err)
	}
	return sweepResponse{Source: name, Columns: sweep.Columns(), Rows: rows}, nil
}

func parquetSweepRows(data []byte) (rows []json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil { // a malformed file must not take the server down
			err = fmt.Errorf("reading Parquet: %v", p)
		}
	}()
	res, err := sweep.ReadParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	return sweep.JSONRows(res)
}

// csvSweepRows reads a `sim sweep --csv` table: its header must be
// sweep.Columns(). Cells become numbers, booleans or strings; empty cells
// null; probe_log stays the JSON array it holds.
func csvSweepRows(data []byte) ([]json.RawMessage, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cols := sweep.Columns()
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading CSV header: %v", err)
	}
	if len(head) != len(cols) {
		return nil, fmt.Errorf("header: %d columns, want the %d of a sim sweep table (%s, ...)", len(head), len(cols), strings.Join(cols[:4], ", "))
	}
	for i, c := range cols {
		if head[i] != c {
			return nil, fmt.Errorf("header: column %d is %q, want %q", i+1, head[i], c)
		}
	}
	var rows []json.RawMessage
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		obj := make([]byte, 0, 512)
		obj = append(obj, '{')
		for i, c := range cols {
			if i > 0 {
				obj = append(obj, ',')
			}
			obj = appendJSONString(obj, c)
			obj = append(obj, ':')
			obj = append(obj, csvCell(c, rec[i])...)
		}
		obj = append(obj, '}')
		rows = append(rows, obj)
		if len(rows) > 1_000_000 {
			return nil, fmt.Errorf("more than 1,000,000 rows")
		}
	}
	return rows, nil
}

func csvCell(col, v string) []byte {
	switch {
	case v == "":
		return []byte("null")
	case col == "probe_log" && json.Valid([]byte(v)):
		return []byte(v)
	case v == "true" || v == "false":
		return []byte(v)
	}
	if col != "fingerprint" && col != "gpu" && col != "status" && col != "reason" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && !isNaNOrInf(f) {
			return strconv.AppendFloat(nil, f, 'g', -1, 64)
		}
	}
	return appendJSONString(nil, v)
}

func isNaNOrInf(f float64) bool { return f != f || f > 1e308 || f < -1e308 }
