package traces

import (
	"fmt"
	"io"

	"github.com/roofsim/roofsim/internal/safefile"
)

// ReadRequests reads request records in format f. It holds every record in
// memory and is meant for tests and validation, not for million-request
// runs. Parquet needs random access, so for Parquet the whole stream is
// buffered first; prefer ReadRequestsFile for files.
func ReadRequests(r io.Reader, f Format) ([]RequestRecord, error) {
	switch f {
	case CSV:
		return readCSV[RequestRecord](r)
	case JSONL:
		return readJSONL[RequestRecord](r)
	case Parquet:
		return readParquetAll(r, rowToRequest)
	}
	return nil, fmt.Errorf("format %q: unknown (want csv, jsonl or parquet)", string(f))
}

// ReadSteps reads step records in format f; see ReadRequests.
func ReadSteps(r io.Reader, f Format) ([]StepRecord, error) {
	switch f {
	case CSV:
		return readCSV[StepRecord](r)
	case JSONL:
		return readJSONL[StepRecord](r)
	case Parquet:
		return readParquetAll(r, rowToStep)
	}
	return nil, fmt.Errorf("format %q: unknown (want csv, jsonl or parquet)", string(f))
}

// ReadRequestsFile reads request records from a file, picking the format
// from its extension (FormatFromPath). Errors name the path.
func ReadRequestsFile(path string) ([]RequestRecord, error) {
	return readFile(path, ReadRequests, rowToRequest)
}

// ReadStepsFile reads step records from a file, picking the format from its
// extension (FormatFromPath). Errors name the path.
func ReadStepsFile(path string) ([]StepRecord, error) {
	return readFile(path, ReadSteps, rowToStep)
}

func readFile[R any, Row any](path string, read func(io.Reader, Format) ([]R, error), convert func(*Row) R) ([]R, error) {
	f, err := FormatFromPath(path)
	if err != nil {
		return nil, err
	}
	file, err := safefile.Open(path, safefile.Trace)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var out []R
	if f == Parquet {
		out, err = readParquet(file, file.Size(), convert)
	} else {
		out, err = read(safefile.SkipBOM(file), f)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", path, err)
	}
	return out, nil
}
