package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// ScanRequestsFile calls fn for every request record of a trace file, in
// file order, holding one record (one Parquet batch) in memory at a time:
// the streaming counterpart of ReadRequestsFile, for runs of any size. The
// format comes from the extension; errors name the path. fn's error stops
// the scan and is returned.
func ScanRequestsFile(path string, fn func(*RequestRecord) error) error {
	return scanFile(path, rowToRequest, fn)
}

// ScanStepsFile is ScanRequestsFile for step records.
func ScanStepsFile(path string, fn func(*StepRecord) error) error {
	return scanFile(path, rowToStep, fn)
}

func scanFile[T any, P recordPtr[T], Row any](path string, convert func(*Row) T, fn func(*T) error) error {
	f, err := FormatFromPath(path)
	if err != nil {
		return err
	}
	file, err := safefile.Open(path, safefile.Trace)
	if err != nil {
		return err
	}
	defer file.Close()
	switch f {
	case CSV:
		err = scanCSV[T, P](safefile.SkipBOM(file), fn)
	case JSONL:
		err = scanJSONL[T, P](safefile.SkipBOM(file), fn)
	case Parquet:
		err = scanParquet(file, file.Size(), convert, fn)
	}
	if err != nil {
		return fmt.Errorf("reading %q: %w", path, err)
	}
	return nil
}

func scanCSV[T any, P recordPtr[T]](r io.Reader, fn func(*T) error) error {
	want := columnsOf[T, P]()
	t, err := table.Open(r, "csv", table.Options{})
	if errors.Is(err, table.ErrEmpty) {
		return fmt.Errorf("csv:1: empty input: missing header row (%s)", strings.Join(want, ","))
	}
	if err != nil {
		return err
	}
	if !slices.Equal(t.Header(), want) {
		return fmt.Errorf("csv:1: header is %s, want %s", strings.Join(t.Header(), ","), strings.Join(want, ","))
	}
	d := csvDecoder{t: t}
	var rec T
	for t.Next() {
		rec = *new(T)
		P(&rec).visitColumns(&d)
		if t.Err() != nil {
			break
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	return t.Err()
}

func scanJSONL[T any, P recordPtr[T]](r io.Reader, fn func(*T) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxJSONLine)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(text, &m); err != nil || m == nil {
			return fmt.Errorf("jsonl line %d: want a JSON object", line)
		}
		d := jsonDecoder{m: m}
		var rec T
		P(&rec).visitColumns(&d)
		if d.err != nil {
			return fmt.Errorf("jsonl line %d: %w", line, d.err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	return nil
}

func scanParquet[Row any, T any](r io.ReaderAt, size int64, convert func(*Row) T, fn func(*T) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("parquet: malformed file: %v", v)
		}
	}()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if err := checkIntColumns[Row](f); err != nil {
		return err
	}
	pr := parquet.NewGenericReader[Row](f)
	defer pr.Close()
	buf := make([]Row, parquetBatchRows)
	for {
		n, rerr := pr.Read(buf)
		for i := range n {
			rec := convert(&buf[i])
			if err := fn(&rec); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("parquet: %w", rerr)
		}
	}
}
