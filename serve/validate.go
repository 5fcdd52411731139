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
)

// validateResponse carries a `sim validate ... --json` report as it is:
// the page draws a predicted-vs-measured scatter for every pair of
// measured_X / predicted_X fields in its rows and a table for every list
// of objects (families, groups, models), so it follows the report's
// shape rather than a copy of it.
type validateResponse struct {
	Source string          `json:"source"`
	Report json.RawMessage `json:"report"`
}

// handleValidate loads a validation report: ?file=PATH under --data, or
// the body.
func (s *Server) handleValidate(r *http.Request) (any, error) {
	var data []byte
	name := "upload"
	if rel := r.URL.Query().Get("file"); rel != "" {
		p, err := s.data.resolve(rel)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			return nil, errorf(http.StatusBadRequest, "file: %q is not a regular file", rel)
		}
		if st.Size() > s.opts.MaxUploadBytes {
			return nil, errorf(http.StatusRequestEntityTooLarge, "file: %q is larger than %d bytes", rel, s.opts.MaxUploadBytes)
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
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] != '{' && data[0] != '[' {
		rep, err := stepPredictionsReport(data)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "report %s: %v", name, err)
		}
		return validateResponse{Source: name, Report: rep}, nil
	}
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return nil, errorf(http.StatusBadRequest, "report: want the JSON object printed by `sim validate kernels|serving|throughput|steps --json`, or the CSV of `sim validate steps --out`")
	}
	return validateResponse{Source: name, Report: data}, nil
}

// maxStepRows caps the rows of a step-prediction CSV.
const maxStepRows = 50_000

// stepPredictionsReport turns the CSV `sim validate steps --out` writes (the
// measured per-step table with a predicted_ms column) into a report whose
// rows carry measured_step_ms (the table's latency_ms) and
// predicted_step_ms, so the page draws them like any other report.
func stepPredictionsReport(data []byte) (json.RawMessage, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the CSV header: %v", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	lat, okL := col["latency_ms"]
	pred, okP := col["predicted_ms"]
	if !okL || !okP {
		return nil, fmt.Errorf("a CSV report needs the latency_ms and predicted_ms columns of `sim validate steps --out`")
	}
	// Rows are written by hand to keep the table's column order.
	out := []byte(`{"rows":[`)
	for line, n := 2, 0; ; line, n = line+1, n+1 {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if n == maxStepRows {
			return nil, fmt.Errorf("more than %d rows", maxStepRows)
		}
		m, err1 := strconv.ParseFloat(rec[lat], 64)
		p, err2 := strconv.ParseFloat(rec[pred], 64)
		if err1 != nil || err2 != nil || isNaNOrInf(m) || isNaNOrInf(p) {
			return nil, fmt.Errorf("line %d: latency_ms %q and predicted_ms %q must be numbers", line, rec[lat], rec[pred])
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, `{"measured_step_ms":%s,"predicted_step_ms":%s`,
			strconv.FormatFloat(m, 'g', -1, 64), strconv.FormatFloat(p, 'g', -1, 64))
		for i, h := range head {
			out = append(out, ',')
			out = appendJSONString(out, h)
			out = append(out, ':')
			if f, err := strconv.ParseFloat(rec[i], 64); err == nil && !isNaNOrInf(f) {
				out = strconv.AppendFloat(out, f, 'g', -1, 64)
			} else {
				out = appendJSONString(out, rec[i])
			}
		}
		out = append(out, '}')
	}
	return append(out, "]}"...), nil
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes
// U+FFFD, as encoding/json writes it).
func appendJSONString(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(out, b...)
}
