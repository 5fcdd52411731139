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

// sweepResponse is a `sim sweep` result table: its columns (the fixed ones
// of docs/sweep.md, with a column per setting its grid swept beyond the
// typed lists) and one object per row, with null where a value does not
// apply. The Pareto and recommended flags come from the file.
//
// ColumnInfo annotates Columns one for one (sweep.ColumnInfos): the web
// view's table shows the columns it marks, under its labels. SLO holds the
// sweep's latency bounds when the file records them (Parquet does, CSV does
// not), for the chart to draw.
type sweepResponse struct {
	Source     string             `json:"source"`
	Columns    []string           `json:"columns"`
	ColumnInfo []sweep.ColumnInfo `json:"column_info"`
	SLO        []sloBound         `json:"slo"`
	Rows       []json.RawMessage  `json:"rows"`
}

// sloBound is one latency bound of a sweep's SLO: Key ("tpot_p99") <= LimitMs.
type sloBound struct {
	Key     string  `json:"key"`
	Metric  string  `json:"metric"`
	Stat    string  `json:"stat"`
	LimitMs float64 `json:"limit_ms"`
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
	var cols []string
	slo := []sloBound{}
	if bytes.HasPrefix(data, []byte("PAR1")) {
		var spec string
		if rows, cols, spec, err = parquetSweepRows(data); err != nil {
			return nil, errorf(http.StatusBadRequest, "sweep %s: %v", name, err)
		}
		if slo, err = sloBounds(spec); err != nil {
			return nil, errorf(http.StatusBadRequest, "sweep %s: recorded SLO: %v", name, err)
		}
	} else if rows, cols, err = csvSweepRows(data, name); err != nil {
		// CSV errors begin with name:line.
		return nil, errorf(http.StatusBadRequest, "sweep %v", err)
	}
	return sweepResponse{Source: name, Columns: cols, ColumnInfo: sweep.ColumnInfos(cols), SLO: slo, Rows: rows}, nil
}

// sloBounds parses a sweep's recorded SLO ("" gives none).
func sloBounds(spec string) ([]sloBound, error) {
	out := []sloBound{}
	if spec == "" {
		return out, nil
	}
	slo, err := sweep.ParseSLO(spec)
	if err != nil {
		return nil, err
	}
	for _, b := range slo.Bounds {
		out = append(out, sloBound{Key: b.Key(), Metric: b.Metric, Stat: b.Stat, LimitMs: b.LimitMs()})
	}
	return out, nil
}

func parquetSweepRows(data []byte) (rows []json.RawMessage, cols []string, slo string, err error) {
	defer func() {
		if p := recover(); p != nil { // a malformed file must not take the server down
			err = fmt.Errorf("reading Parquet: %v", p)
		}
	}()
	res, err := sweep.ReadParquet(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, nil, "", err
	}
	rows, err = sweep.JSONRows(res)
	return rows, res.Columns(), res.SLO, err
}

// csvSweepRows reads a `sim sweep --csv` table: its header must be
// sweep.Columns(), with a column per swept setting after
// max_num_batched_tokens (sweep.HeaderKeys). Cells become numbers, booleans
// or strings; empty cells null; probe_log stays the JSON array it holds.
func csvSweepRows(data []byte, name string) ([]json.RawMessage, []string, error) {
	fixed := sweep.Columns()
	t, err := table.Open(bytes.NewReader(data), name, table.Options{Required: fixed})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (the header of a sim sweep table: %s, ...)", err, strings.Join(fixed[:4], ", "))
	}
	keys, ok := sweep.HeaderKeys(t.Header())
	cols := sweep.ColumnsWith(keys)
	if !ok {
		for i, h := range t.Header() {
			if i >= len(fixed) || h != fixed[i] {
				want := "nothing"
				if i < len(fixed) {
					want = fmt.Sprintf("%q", fixed[i])
				}
				return nil, nil, fmt.Errorf("%s:1: header: column %d is %q, want %s (the columns of a sim sweep table, in order, with one per swept setting after max_num_batched_tokens)", name, i+1, h, want)
			}
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
			return nil, nil, fmt.Errorf("%s: more than 1,000,000 rows", name)
		}
	}
	return rows, cols, t.Err()
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
	if col != "fingerprint" && col != "gpu" && col != "status" && col != "reason" && col != "profile_status" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && !isNaNOrInf(f) {
			return strconv.AppendFloat(nil, f, 'g', -1, 64)
		}
	}
	return appendJSONString(nil, v)
}

func isNaNOrInf(f float64) bool { return f != f || f > 1e308 || f < -1e308 }
