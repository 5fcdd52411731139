package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
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
	if len(data) == 0 || data[0] != '{' || !json.Valid(data) {
		return nil, errorf(http.StatusBadRequest, "report: want the JSON object printed by `sim validate kernels|serving|throughput --json`")
	}
	return validateResponse{Source: name, Report: data}, nil
}
