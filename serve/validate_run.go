package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"

	"github.com/roofsim/roofsim/calibrate/aiconfigurator"
	"github.com/roofsim/roofsim/calibrate/kernels"
	"github.com/roofsim/roofsim/calibrate/llamacpp"
	"github.com/roofsim/roofsim/calibrate/serving"
	"github.com/roofsim/roofsim/calibrate/throughput"
	"github.com/roofsim/roofsim/hardware"
)

// validateRunRequest runs one of `sim validate`'s comparisons on measured
// data under --data: kernels (a directory of kernel tables, with gpu),
// serving (a closed-loop benchmark CSV) or throughput (llama.cpp rows, with
// gpu).
type validateRunRequest struct {
	Kind string `json:"kind"`
	GPU  string `json:"gpu"`
	File string `json:"file"`
}

// handleValidateRun answers with the same report `sim validate <kind>
// --json` prints, in the shape of handleValidate. One validation runs at a
// time (they use every core); a second gets 429.
func (s *Server) handleValidateRun(r *http.Request) (any, error) {
	var req validateRunRequest
	if err := decodeJSON(r, &req); err != nil {
		return nil, err
	}
	if req.Kind != "kernels" && req.Kind != "serving" && req.Kind != "throughput" {
		return nil, errorf(http.StatusBadRequest, "kind: want kernels, serving or throughput, got %q", req.Kind)
	}
	path, err := s.data.resolve(req.File)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, errorf(http.StatusNotFound, "file: %q not found in the data directory", req.File)
	}
	if req.Kind == "kernels" && !st.IsDir() {
		return nil, errorf(http.StatusBadRequest, "file: kernels wants a directory of kernel tables, %q is a file", req.File)
	}
	if req.Kind != "kernels" && !st.Mode().IsRegular() {
		return nil, errorf(http.StatusBadRequest, "file: %s wants a CSV file, %q is not one", req.Kind, req.File)
	}
	select {
	case s.validating <- struct{}{}:
		defer func() { <-s.validating }()
	default:
		return nil, errorf(http.StatusTooManyRequests, "validate: another validation is running; try again when it finishes")
	}
	var rep any
	switch req.Kind {
	case "kernels", "throughput":
		g, err := gpuRef{GPU: req.GPU}.resolve()
		if err != nil {
			return nil, err
		}
		// A client that goes away stops the kernel validation between its
		// families; the throughput one takes under a second and is only
		// checked before it starts.
		ctx := r.Context()
		if req.Kind == "kernels" {
			rep, err = kernelsWithPoints(ctx, g, aiconfigurator.Dir(path))
		} else {
			var bench *llamacpp.Bench
			if bench, err = read(s.data, req.File, path, llamacpp.Read); err == nil {
				if err = context.Cause(ctx); err == nil {
					rep, err = throughput.Validate(g, bench)
				}
			}
		}
		if cerr := context.Cause(ctx); cerr != nil {
			return nil, errorf(http.StatusServiceUnavailable, "validate: stopped: %v", cerr)
		}
		if err != nil {
			return nil, badRequest(hideDataRoot(err, s.data.root))
		}
	case "serving":
		rows, err := read(s.data, req.File, path, aiconfigurator.ParseServing)
		if err != nil {
			return nil, badRequest(hideDataRoot(err, s.data.root))
		}
		// Seed 1 is sim validate serving's --seed default, so the page and
		// the command print the same numbers. The rows stop being simulated
		// when the client goes away.
		if rep, err = serving.ValidateDistinct(r.Context(), rows, serving.Options{Seed: 1}); err != nil {
			return nil, errorf(http.StatusServiceUnavailable, "validate: stopped: %v", err)
		}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	return validateResponse{Source: "sim validate " + req.Kind + " " + req.File, Report: data}, nil
}

// kernelPointsPerFamily caps the scatter's rows per kernel family: enough to
// show each table's spread, small enough for the page (a GEMM table has
// tens of thousands of rows).
const kernelPointsPerFamily = 300

// kernelsReport is `sim validate kernels --json`'s report plus a sample of
// its rows (kernels.Points), which the page draws as a predicted-vs-measured
// scatter coloured by family.
type kernelsReport struct {
	*kernels.Report
	Points []kernels.Point `json:"points"`
}

func kernelsWithPoints(ctx context.Context, g *hardware.GPU, dir kernels.Source) (*kernelsReport, error) {
	t, err := dir.Tables() // read once, priced twice
	if err != nil {
		return nil, err
	}
	src := kernels.TablesSource{T: t}
	rep, err := kernels.ValidateContext(ctx, g, src)
	if err != nil {
		return nil, err
	}
	pts, err := kernels.PointsContext(ctx, g, src, kernelPointsPerFamily)
	if err != nil {
		return nil, err
	}
	return &kernelsReport{Report: rep, Points: pts}, nil
}

// hideDataRoot rewrites the data directory's absolute path out of an error.
func hideDataRoot(err error, root string) error {
	return errorf(http.StatusBadRequest, "%s", strings.ReplaceAll(err.Error(), root+string(os.PathSeparator), ""))
}
