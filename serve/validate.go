package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/roofsim/roofsim/internal/table"
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
	data, name, err := s.dataOrBody(r, s.opts.MaxUploadBytes)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] != '{' && data[0] != '[' {
		rep, err := stepPredictionsReport(data, name)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "report %v", err)
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
func stepPredictionsReport(data []byte, name string) (json.RawMessage, error) {
	t, err := table.Open(bytes.NewReader(data), name, table.Options{Required: []string{"latency_ms", "predicted_ms"}})
	if err != nil {
		return nil, fmt.Errorf("%w (a CSV report needs the latency_ms and predicted_ms columns of `sim validate steps --out`)", err)
	}
	head := t.Header()
	// Rows are written by hand to keep the table's column order.
	out := []byte(`{"rows":[`)
	for n := 0; t.Next(); n++ {
		if n == maxStepRows {
			return nil, fmt.Errorf("%s: more than %d rows", name, maxStepRows)
		}
		m, p := t.Float("latency_ms"), t.Float("predicted_ms")
		if t.Err() != nil {
			break
		}
		if n > 0 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, `{"measured_step_ms":%s,"predicted_step_ms":%s`,
			strconv.FormatFloat(m, 'g', -1, 64), strconv.FormatFloat(p, 'g', -1, 64))
		for _, h := range head {
			out = append(out, ',')
			out = appendJSONString(out, h)
			out = append(out, ':')
			if f, err := strconv.ParseFloat(t.Raw(h), 64); err == nil && !isNaNOrInf(f) {
				out = strconv.AppendFloat(out, f, 'g', -1, 64)
			} else {
				out = appendJSONString(out, t.Raw(h))
			}
		}
		out = append(out, '}')
	}
	if err := t.Err(); err != nil {
		return nil, err
	}
	return append(out, "]}"...), nil
}

// appendJSONString appends s as a JSON string (invalid UTF-8 becomes
// U+FFFD, as encoding/json writes it).
func appendJSONString(out []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(out, b...)
}
