package traces

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// ParquetRowGroupRows is the number of rows per Parquet row group. The
// writer holds at most one row group in memory, so this bounds its memory
// (about 100 bytes per request row before compression).
const ParquetRowGroupRows = 64 << 10

// parquetBatchRows is how many rows the Parquet writer converts before
// handing them to parquet-go in one call.
const parquetBatchRows = 1024

// requestRow is the Parquet schema of a RequestRecord. Every float column is
// optional: NaN (undefined, e.g. TPOT of a one-token output) is stored as
// null, exactly as CSV (empty) and JSON Lines (null) do.
type requestRow struct {
	ID              uint64   `parquet:"id"`
	Client          string   `parquet:"client,dict"`
	ArrivalS        *float64 `parquet:"arrival_s,optional"`
	FirstScheduledS *float64 `parquet:"first_scheduled_s,optional"`
	FirstTokenS     *float64 `parquet:"first_token_s,optional"`
	FinishS         *float64 `parquet:"finish_s,optional"`
	PromptTokens    int64    `parquet:"prompt_tokens"`
	CachedTokens    int64    `parquet:"cached_tokens"`
	OutputTokens    int64    `parquet:"output_tokens"`
	TTFTms          *float64 `parquet:"ttft_ms,optional"`
	TPOTms          *float64 `parquet:"tpot_ms,optional"`
	E2Ems           *float64 `parquet:"e2e_ms,optional"`
	QueueMs         *float64 `parquet:"queue_ms,optional"`
	Preemptions     int64    `parquet:"preemptions"`
	Replica         int64    `parquet:"replica"`
	Status          string   `parquet:"status,dict"`
}

// stepRow is the Parquet schema of a StepRecord; step floats are plain
// doubles (a NaN, which the engine does not produce, is stored as NaN).
type stepRow struct {
	Replica        int64   `parquet:"replica"`
	TimeS          float64 `parquet:"time_s"`
	DurationS      float64 `parquet:"duration_s"`
	PrefillTokens  int64   `parquet:"prefill_tokens"`
	DecodeRequests int64   `parquet:"decode_requests"`
	BatchSize      int64   `parquet:"batch_size"`
	KVBlocksUsed   int64   `parquet:"kv_blocks_used"`
	KVBlocksTotal  int64   `parquet:"kv_blocks_total"`
	ComputeS       float64 `parquet:"compute_s"`
	MemoryS        float64 `parquet:"memory_s"`
	CommS          float64 `parquet:"comm_s"`
	OverheadS      float64 `parquet:"overhead_s"`
	Preempted      int64   `parquet:"preempted"`
}

// optionalSlots is the number of optional floats in a requestRow.
const optionalSlots = 8

// rowSlot is scratch storage a converted row may point into, so optional
// columns cost no allocation per row.
type rowSlot [optionalSlots]float64

// optional returns nil for NaN (null) or a pointer to x stored in *slot.
func optional(slot *float64, x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	*slot = x
	return slot
}

func fromOptional(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func checkFinite(name string, x float64) error {
	if math.IsInf(x, 0) {
		return infError(name, x)
	}
	return nil
}

func requestToRow(r *RequestRecord, slot *rowSlot, row *requestRow) error {
	for _, c := range [...]struct {
		name string
		x    float64
	}{
		{"arrival_s", r.ArrivalS}, {"first_scheduled_s", r.FirstScheduledS}, {"first_token_s", r.FirstTokenS},
		{"finish_s", r.FinishS}, {"ttft_ms", r.TTFTms}, {"tpot_ms", r.TPOTms}, {"e2e_ms", r.E2Ems}, {"queue_ms", r.QueueMs},
	} {
		if err := checkFinite(c.name, c.x); err != nil {
			return err
		}
	}
	*row = requestRow{
		ID: r.ID, Client: r.Client, ArrivalS: optional(&slot[7], r.ArrivalS),
		FirstScheduledS: optional(&slot[0], r.FirstScheduledS),
		FirstTokenS:     optional(&slot[1], r.FirstTokenS),
		FinishS:         optional(&slot[2], r.FinishS),
		PromptTokens:    int64(r.PromptTokens), CachedTokens: int64(r.CachedTokens), OutputTokens: int64(r.OutputTokens),
		TTFTms:      optional(&slot[3], r.TTFTms),
		TPOTms:      optional(&slot[4], r.TPOTms),
		E2Ems:       optional(&slot[5], r.E2Ems),
		QueueMs:     optional(&slot[6], r.QueueMs),
		Preemptions: int64(r.Preemptions), Replica: int64(r.Replica), Status: r.Status,
	}
	return nil
}

func rowToRequest(row *requestRow) RequestRecord {
	return RequestRecord{
		ID: row.ID, Client: row.Client, Replica: int(row.Replica),
		ArrivalS: fromOptional(row.ArrivalS), FirstScheduledS: fromOptional(row.FirstScheduledS),
		FirstTokenS: fromOptional(row.FirstTokenS), FinishS: fromOptional(row.FinishS),
		PromptTokens: int(row.PromptTokens), CachedTokens: int(row.CachedTokens), OutputTokens: int(row.OutputTokens),
		TTFTms: fromOptional(row.TTFTms), TPOTms: fromOptional(row.TPOTms),
		E2Ems: fromOptional(row.E2Ems), QueueMs: fromOptional(row.QueueMs),
		Preemptions: int(row.Preemptions), Status: row.Status,
	}
}

func stepToRow(s *StepRecord, _ *rowSlot, row *stepRow) error {
	for _, c := range [...]struct {
		name string
		x    float64
	}{
		{"time_s", s.TimeS}, {"duration_s", s.DurationS}, {"compute_s", s.ComputeS},
		{"memory_s", s.MemoryS}, {"comm_s", s.CommS}, {"overhead_s", s.OverheadS},
	} {
		if err := checkFinite(c.name, c.x); err != nil {
			return err
		}
	}
	*row = stepRow{
		Replica: int64(s.Replica), TimeS: s.TimeS, DurationS: s.DurationS,
		PrefillTokens: int64(s.PrefillTokens), DecodeRequests: int64(s.DecodeRequests), BatchSize: int64(s.BatchSize),
		KVBlocksUsed: int64(s.KVBlocksUsed), KVBlocksTotal: int64(s.KVBlocksTotal),
		ComputeS: s.ComputeS, MemoryS: s.MemoryS, CommS: s.CommS, OverheadS: s.OverheadS,
		Preempted: int64(s.Preempted),
	}
	return nil
}

func rowToStep(row *stepRow) StepRecord {
	return StepRecord{
		Replica: int(row.Replica), TimeS: row.TimeS, DurationS: row.DurationS,
		PrefillTokens: int(row.PrefillTokens), DecodeRequests: int(row.DecodeRequests), BatchSize: int(row.BatchSize),
		KVBlocksUsed: int(row.KVBlocksUsed), KVBlocksTotal: int(row.KVBlocksTotal),
		ComputeS: row.ComputeS, MemoryS: row.MemoryS, CommS: row.CommS, OverheadS: row.OverheadS,
		Preempted: int(row.Preempted),
	}
}

// parquetWriter converts records into a batch of rows, hands full batches
// to parquet-go, and ends a row group every ParquetRowGroupRows rows.
type parquetWriter[R any, Row any] struct {
	pw      *parquet.GenericWriter[Row]
	convert func(*R, *rowSlot, *Row) error
	batch   []Row
	slots   []rowSlot
	inGroup int // rows handed to pw since the last row-group flush
	n       int // records accepted
	err     error
	closed  bool
}

var (
	_ RequestWriter = (*parquetWriter[RequestRecord, requestRow])(nil)
	_ StepWriter    = (*parquetWriter[StepRecord, stepRow])(nil)
)

func newParquetWriter[R any, Row any](w io.Writer, convert func(*R, *rowSlot, *Row) error) *parquetWriter[R, Row] {
	pw := parquet.NewGenericWriter[Row](w,
		parquet.Compression(&snappy.Codec{}),
		parquet.MaxRowsPerRowGroup(ParquetRowGroupRows),
		parquet.CreatedBy("roofsim", "traces", "none"),
	)
	return &parquetWriter[R, Row]{
		pw:      pw,
		convert: convert,
		batch:   make([]Row, 0, parquetBatchRows),
		slots:   make([]rowSlot, parquetBatchRows),
	}
}

// Write converts one record. A record with an infinite float is refused with
// an error naming the column; I/O errors are sticky.
func (p *parquetWriter[R, Row]) Write(rec *R) error {
	if p.closed {
		return errClosed
	}
	if p.err != nil {
		return p.err
	}
	i := len(p.batch)
	p.batch = p.batch[:i+1]
	if err := p.convert(rec, &p.slots[i], &p.batch[i]); err != nil {
		p.batch = p.batch[:i]
		return fmt.Errorf("record %d: %w", p.n, err)
	}
	p.n++
	if len(p.batch) == cap(p.batch) {
		p.err = p.flushBatch()
	}
	return p.err
}

func (p *parquetWriter[R, Row]) flushBatch() error {
	if len(p.batch) == 0 {
		return nil
	}
	if _, err := p.pw.Write(p.batch); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	p.inGroup += len(p.batch)
	clear(p.batch) // drop pointers into slots and strings
	p.batch = p.batch[:0]
	if p.inGroup >= ParquetRowGroupRows {
		p.inGroup = 0
		if err := p.pw.Flush(); err != nil {
			return fmt.Errorf("parquet: %w", err)
		}
	}
	return nil
}

// Close writes the last rows and the footer; it does not close the
// underlying writer.
func (p *parquetWriter[R, Row]) Close() error {
	if p.closed {
		return errClosed
	}
	p.closed = true
	if p.err != nil {
		return p.err
	}
	if p.err = p.flushBatch(); p.err != nil {
		return p.err
	}
	if err := p.pw.Close(); err != nil {
		p.err = fmt.Errorf("parquet: %w", err)
	}
	return p.err
}

// ColumnTypeError is a Parquet column whose physical type the reader would
// convert lossily into its integer field: a count column (prompt_tokens,
// output_tokens, ...) must be INT32 or INT64; a FLOAT or DOUBLE one is
// refused even when its values are whole (100.7 would be read as 100), a
// BOOLEAN one too (true would be read as 1). Every row has the column's
// type, so Row is the first row (1). The caller adds the file's path.
type ColumnTypeError struct {
	Column, Type string
	Row          int
}

func (e *ColumnTypeError) Error() string {
	return fmt.Sprintf("parquet: row %d: column %s has type %s, want INT32 or INT64", e.Row, e.Column, e.Type)
}

// checkIntColumns returns a *ColumnTypeError for the first column of f that
// Row reads into an integer field but f stores as another type.
func checkIntColumns[Row any](f *parquet.File) error {
	for _, want := range parquet.SchemaOf(new(Row)).Fields() {
		if k := want.Type().Kind(); k != parquet.Int32 && k != parquet.Int64 {
			continue
		}
		got, ok := f.Schema().Lookup(want.Name())
		if !ok {
			continue
		}
		if k := got.Node.Type().Kind(); k != parquet.Int32 && k != parquet.Int64 {
			return &ColumnTypeError{Column: want.Name(), Type: k.String(), Row: 1}
		}
	}
	return nil
}

// readParquet reads every row of a Parquet file of Row and converts it.
func readParquet[Row any, R any](r io.ReaderAt, size int64, convert func(*Row) R) (out []R, err error) {
	// parquet-go panics on some malformed inputs; report them as errors.
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, fmt.Errorf("parquet: malformed file: %v", v)
		}
	}()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	if err := checkIntColumns[Row](f); err != nil {
		return nil, err
	}
	pr := parquet.NewGenericReader[Row](f)
	defer pr.Close()
	out = make([]R, 0, pr.NumRows())
	buf := make([]Row, parquetBatchRows)
	for {
		n, err := pr.Read(buf)
		for i := range n {
			out = append(out, convert(&buf[i]))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parquet: %w", err)
		}
	}
}

// readParquetAll buffers a stream in memory to read it as Parquet, which
// needs random access.
func readParquetAll[Row any, R any](r io.Reader, convert func(*Row) R) ([]R, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return readParquet(bytes.NewReader(data), int64(len(data)), convert)
}
