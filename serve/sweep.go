package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/roofsim/roofsim/internal/table"
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
	data, name, err := s.dataOrBody(r, maxDataFileBytes)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, errorf(http.StatusBadRequest, "sweep: empty file; give a `sim sweep --out` Parquet or `--csv` file")
	}
	var rows []json.RawMessage
	if bytes.HasPrefix(data, []byte("PAR1")) {
		if rows, err = parquetSweepRows(data); err != nil {
			return nil, errorf(http.StatusBadRequest, "sweep %s: %v", name, err)
		}
	} else if rows, err = csvSweepRows(data, name); err != nil {
		// CSV errors begin with name:line.
		return nil, errorf(http.StatusBadRequest, "sweep %v", err)
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
func csvSweepRows(data []byte, name string) ([]json.RawMessage, error) {
	cols := sweep.Columns()
	t, err := table.Open(bytes.NewReader(data), name, table.Options{Required: cols, Known: []string{}})
	if err != nil {
		return nil, fmt.Errorf("%w (the header of a sim sweep table: %s, ...)", err, strings.Join(cols[:4], ", "))
	}
	for i, h := range t.Header() {
		if h != cols[i] {
			return nil, fmt.Errorf("%s:1: header: column %d is %q, want %q (the columns of a sim sweep table, in order)", name, i+1, h, cols[i])
		}
	}
	var rows []json.RawMessage
	for t.Next() {
		obj := make([]byte, 0, 512)
		obj = append(obj, '{')
		for i, c := range cols {
			if i > 0 {
				obj = append(obj, ',')
			}
			obj = appendJSONString(obj, c)
			obj = append(obj, ':')
			obj = append(obj, csvCell(c, t.Raw(c))...)
		}
		obj = append(obj, '}')
		rows = append(rows, obj)
		if len(rows) > 1_000_000 {
			return nil, fmt.Errorf("%s: more than 1,000,000 rows", name)
		}
	}
	return rows, t.Err()
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
