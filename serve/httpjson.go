package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"

	"github.com/roofsim/roofsim/internal/safefile"
)

// httpError is an error with the HTTP status it answers.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// errorf is a client error (4xx) or a server error with a status.
func errorf(status int, format string, args ...any) error {
	return &httpError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badRequest wraps a library's input error as a 400.
func badRequest(err error) error {
	var he *httpError
	if errors.As(err, &he) {
		return err
	}
	return &httpError{status: http.StatusBadRequest, msg: err.Error()}
}

// errorBody is every error answer: {"error": "field: reason"}.
type errorBody struct {
	Error string `json:"error"`
}

// apiHandler adapts h: the request body is capped at MaxUploadBytes, a
// result is written as JSON, an error as {"error": ...} with its status
// (500 when it has none), and a panic in h answers 500 instead of killing
// the server.
func (s *Server) apiHandler(h func(*http.Request) (any, error)) http.Handler {
	return s.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := h(r)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	}))
}

// guard caps the body and turns a panic into a 500 JSON error.
func (s *Server) guard(next http.Handler) http.Handler {
	return securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				writeJSON(w, http.StatusInternalServerError, errorBody{fmt.Sprintf("internal error: %v", p)})
			}
		}()
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxUploadBytes)
		next.ServeHTTP(w, r)
	}))
}

// securityHeaders keeps the page self-contained: no framing, no sniffing,
// and scripts, styles and fetches from this origin only.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'")
		next.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		status = he.status
	case errors.As(err, &mb):
		status = http.StatusRequestEntityTooLarge
		err = fmt.Errorf("body: larger than the %d-byte limit", mb.Limit)
	}
	writeJSON(w, status, errorBody{err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{"encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// decodeJSON reads one JSON object into dst, strictly: a Content-Type
// other than application/json (415), unknown fields, trailing data and an
// oversized body (413) are errors.
func decodeJSON(r *http.Request, dst any) error {
	if err := checkMediaType(r, mediaJSON); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errorf(http.StatusRequestEntityTooLarge, "body: larger than the %d-byte limit", mb.Limit)
		}
		return errorf(http.StatusBadRequest, "body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		if errors.Is(err, io.EOF) {
			return errorf(http.StatusBadRequest, "body: want a JSON object, got nothing")
		}
		return errorf(http.StatusBadRequest, "body: %v", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "body: trailing data after the JSON object")
	}
	return nil
}

// dataOrBody returns the file ?file=PATH names under --data (a regular file
// of at most maxBytes) or else the request body, with the name errors use
// for it (the path, or "upload").
func (s *Server) dataOrBody(r *http.Request, maxBytes int64) ([]byte, string, error) {
	rel := r.URL.Query().Get("file")
	if rel == "" {
		data, err := readBody(r)
		return data, "upload", err
	}
	if _, err := s.data.resolve(rel); err != nil {
		return nil, "", err
	}
	// Opened through the data directory's os.Root, so a link swapped in after
	// resolve cannot lead outside it, and through safefile, so a pipe or a
	// device is refused without blocking.
	f, err := safefile.OpenInRoot(s.data.fs, filepath.FromSlash(rel), safefile.Result)
	var notRegular *safefile.NotRegularError
	var tooLarge *safefile.TooLargeError
	switch {
	case errors.As(err, &notRegular):
		return nil, "", errorf(http.StatusBadRequest, "file: %q is not a regular file", rel)
	case errors.As(err, &tooLarge):
		return nil, "", errorf(http.StatusRequestEntityTooLarge, "file: %q is larger than %d bytes", rel, maxBytes)
	case err != nil:
		return nil, "", errorf(http.StatusBadRequest, "file: %q: cannot read it", rel)
	}
	defer f.Close()
	if f.Size() > maxBytes {
		return nil, "", errorf(http.StatusRequestEntityTooLarge, "file: %q is larger than %d bytes", rel, maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	switch {
	case errors.As(err, &tooLarge) || int64(len(data)) > maxBytes:
		return nil, "", errorf(http.StatusRequestEntityTooLarge, "file: %q is larger than %d bytes", rel, maxBytes)
	case err != nil:
		return nil, "", errorf(http.StatusBadRequest, "file: %q: cannot read it", rel)
	}
	return data, rel, nil
}

// readBody reads the whole (capped) body of a raw upload, which must say
// Content-Type: application/octet-stream (415 otherwise).
func readBody(r *http.Request) ([]byte, error) {
	if err := checkMediaType(r, mediaRaw); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, errorf(http.StatusRequestEntityTooLarge, "body: larger than the %d-byte limit", mb.Limit)
		}
		return nil, errorf(http.StatusBadRequest, "body: %v", err)
	}
	return b, nil
}

// num is a float that encodes NaN and ±Inf as JSON null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}
