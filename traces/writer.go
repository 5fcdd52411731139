package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// RequestWriter streams request records to an output. Close flushes what is
// buffered (and, for Parquet, writes the footer); it does not close the
// underlying io.Writer. A writer must not be used after Close.
type RequestWriter interface {
	Write(rec *RequestRecord) error
	Close() error
}

// StepWriter streams step records to an output; see RequestWriter.
type StepWriter interface {
	Write(rec *StepRecord) error
	Close() error
}

// NewRequestWriter returns a writer of request records in format f. CSV
// writes the header row immediately (into its buffer), so even an empty run
// produces a valid file. Memory is bounded: CSV and JSON Lines buffer 64 KiB,
// Parquet one row group of at most ParquetRowGroupRows rows.
func NewRequestWriter(w io.Writer, f Format) (RequestWriter, error) {
	switch f {
	case CSV:
		return newTextWriter[RequestRecord](w, &csvEncoder{}, RequestColumns()), nil
	case JSONL:
		return newTextWriter[RequestRecord](w, &jsonEncoder{}, nil), nil
	case Parquet:
		return newParquetWriter(w, requestToRow), nil
	}
	return nil, fmt.Errorf("format %q: unknown (want csv, jsonl or parquet)", string(f))
}

// NewStepWriter returns a writer of step records in format f; see
// NewRequestWriter.
func NewStepWriter(w io.Writer, f Format) (StepWriter, error) {
	switch f {
	case CSV:
		return newTextWriter[StepRecord](w, &csvEncoder{}, StepColumns()), nil
	case JSONL:
		return newTextWriter[StepRecord](w, &jsonEncoder{}, nil), nil
	case Parquet:
		return newParquetWriter(w, stepToRow), nil
	}
	return nil, fmt.Errorf("format %q: unknown (want csv, jsonl or parquet)", string(f))
}

// errClosed is returned by Write and Close after Close.
var errClosed = errors.New("traces: writer already closed")

// lineEncoder turns one record into one line of text (newline included).
type lineEncoder interface {
	columnVisitor
	begin()
	// end finishes the line and returns it (valid until the next begin) or
	// the first column error.
	end() ([]byte, error)
	// header returns the header line for the given columns, or nil.
	header(cols []string) []byte
}

// textWriter is the CSV and JSON Lines writer: one line per record through a
// 64 KiB buffer.
type textWriter[T any, P recordPtr[T]] struct {
	bw     *bufio.Writer
	enc    lineEncoder
	n      int // records written
	err    error
	closed bool
}

var (
	_ RequestWriter = (*textWriter[RequestRecord, *RequestRecord])(nil)
	_ StepWriter    = (*textWriter[StepRecord, *StepRecord])(nil)
)

func newTextWriter[T any, P recordPtr[T]](w io.Writer, enc lineEncoder, header []string) *textWriter[T, P] {
	tw := &textWriter[T, P]{bw: bufio.NewWriterSize(w, 64<<10), enc: enc}
	if h := enc.header(header); h != nil {
		_, tw.err = tw.bw.Write(h)
	}
	return tw
}

// Write encodes one record. A record with an infinite float is refused with
// an error naming the column; the output stays valid and later writes work.
// An I/O error is sticky.
func (tw *textWriter[T, P]) Write(rec P) error {
	if tw.closed {
		return errClosed
	}
	if tw.err != nil {
		return tw.err
	}
	tw.enc.begin()
	rec.visitColumns(tw.enc)
	line, err := tw.enc.end()
	if err != nil {
		return fmt.Errorf("record %d: %w", tw.n, err)
	}
	if _, err := tw.bw.Write(line); err != nil {
		tw.err = err
		return err
	}
	tw.n++
	return nil
}

// Close flushes the buffer; it does not close the underlying writer.
func (tw *textWriter[T, P]) Close() error {
	if tw.closed {
		return errClosed
	}
	tw.closed = true
	if tw.err != nil {
		return tw.err
	}
	tw.err = tw.bw.Flush()
	return tw.err
}
