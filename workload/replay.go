package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/roofsim/roofsim/internal/limits"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/roofsim/roofsim/internal/safefile"
	"github.com/roofsim/roofsim/internal/table"
)

// Trace is a recorded request stream to replay. Its columns (CSV header, JSON Lines
// keys, Parquet column names) are:
//
//	arrival_s      seconds since the start of the trace (>= 0)          required
//	prompt_tokens  total prompt length, prefix included (>= 1)          required
//	output_tokens  tokens generated (>= 1)                              required
//	prefix_id      identifier of a shared prefix                        optional
//	prefix_tokens  length of that prefix (1..prompt_tokens)             with prefix_id
//	session_id     identifier of a conversation                        optional
//	client         client name                                          optional
//
// In a Parquet trace the count columns must be INT32 or INT64 (see TraceColumnTypeError).
//
// Rows with the same prefix_id share their first prefix_tokens tokens; rows with the same
// session_id share their history after the prefix (each turn's logged prompt contains the
// earlier turns), so prefix caching sees the reuse. Arrival times are taken as recorded:
// the replay is open loop and OnComplete produces nothing. Rows that are not in
// nondecreasing arrival order are sorted stably by arrival time.
type Trace struct {
	// Path is the file the trace was read from.
	Path string
	// Rows are the requests in nondecreasing ArrivalNS.
	Rows []TraceRow
	// Clients are the client names in order of first appearance; Request.Client indexes
	// it. Empty when the trace has no client column.
	Clients []string
	// PrefixIDs and SessionIDs are the distinct identifiers in order of first appearance.
	PrefixIDs, SessionIDs []string
}

// TraceRow is one request of a trace.
type TraceRow struct {
	ArrivalNS    int64
	PromptTokens int
	OutputTokens int
	Prefix       int // index into Trace.PrefixIDs; -1 when none
	PrefixTokens int
	Session      int // index into Trace.SessionIDs; -1 when none
	Turn         int // 1-based turn within the session after sorting; 0 when none
	Client       int // index into Trace.Clients; 0 when the trace has no client column
	Line         int // source line (CSV, JSON Lines) or 1-based row (Parquet)
}

// Trace column names.
const (
	colArrival      = "arrival_s"
	colPrompt       = "prompt_tokens"
	colOutput       = "output_tokens"
	colPrefixID     = "prefix_id"
	colPrefixTokens = "prefix_tokens"
	colSessionID    = "session_id"
	colClient       = "client"
)

var traceColumns = []string{colArrival, colPrompt, colOutput, colPrefixID, colPrefixTokens, colSessionID, colClient}

// rawRow is a trace row as parsed, before validation and interning.
type rawRow struct {
	arrivalS     float64
	prompt       int64
	output       int64
	prefixID     string
	prefixTokens int64
	hasPrefixTok bool
	sessionID    string
	client       string
}

// traceBuilder validates rows and interns identifiers.
type traceBuilder struct {
	tr                               Trace
	prefixIdx, sessionIdx, clientIdx map[string]int
}

func newTraceBuilder(path string) *traceBuilder {
	return &traceBuilder{
		tr:         Trace{Path: path},
		prefixIdx:  map[string]int{},
		sessionIdx: map[string]int{},
		clientIdx:  map[string]int{},
	}
}

func intern(m map[string]int, ids *[]string, id string) int {
	if i, ok := m[id]; ok {
		return i
	}
	m[id] = len(*ids)
	*ids = append(*ids, id)
	return m[id]
}

// add validates r; where is "file:line" for errors.
func (b *traceBuilder) add(r rawRow, line int, where string) error {
	switch {
	case !(r.arrivalS >= 0) || r.arrivalS > 1e9: // 1e9 s keeps nanoseconds within int64
		return fmt.Errorf("%s: %s: must be a number in [0, 1e9] (got %v)", where, colArrival, r.arrivalS)
	case r.prompt < 1 || r.prompt > limits.MaxTokens:
		return fmt.Errorf("%s: %s: %w", where, colPrompt, limits.IntIn(int(r.prompt), 1, limits.MaxTokens))
	case r.output < 1 || r.output > limits.MaxTokens:
		return fmt.Errorf("%s: %s: %w", where, colOutput, limits.IntIn(int(r.output), 1, limits.MaxTokens))
	case len(b.tr.Rows) >= limits.MaxRequests:
		return fmt.Errorf("%s: more than %d rows", where, limits.MaxRequests)
	case r.prefixID != "" && !r.hasPrefixTok:
		return fmt.Errorf("%s: %s: required with %s", where, colPrefixTokens, colPrefixID)
	case r.prefixID == "" && r.hasPrefixTok:
		return fmt.Errorf("%s: %s: given without %s", where, colPrefixTokens, colPrefixID)
	case r.hasPrefixTok && (r.prefixTokens < 1 || r.prefixTokens > r.prompt):
		return fmt.Errorf("%s: %s: must be in [1, %s=%d] (got %d)", where, colPrefixTokens, colPrompt, r.prompt, r.prefixTokens)
	}
	row := TraceRow{
		ArrivalNS:    int64(math.Round(r.arrivalS * 1e9)),
		PromptTokens: int(r.prompt),
		OutputTokens: int(r.output),
		Prefix:       -1,
		Session:      -1,
		Line:         line,
	}
	if r.prefixID != "" {
		row.Prefix = intern(b.prefixIdx, &b.tr.PrefixIDs, r.prefixID)
		row.PrefixTokens = int(r.prefixTokens)
	}
	if r.sessionID != "" {
		row.Session = intern(b.sessionIdx, &b.tr.SessionIDs, r.sessionID)
	}
	if r.client != "" {
		if _, known := b.clientIdx[r.client]; !known && len(b.tr.Clients) >= maxClients {
			return fmt.Errorf("%s: %s: more than %d distinct clients (the cap of a workload file's clients)", where, colClient, maxClients)
		}
		row.Client = intern(b.clientIdx, &b.tr.Clients, r.client)
	}
	b.tr.Rows = append(b.tr.Rows, row)
	return nil
}

// finish sorts the rows and numbers session turns.
func (b *traceBuilder) finish() (*Trace, error) {
	tr := &b.tr
	if len(tr.Rows) == 0 {
		return nil, fmt.Errorf("%s: no requests", tr.Path)
	}
	slices.SortStableFunc(tr.Rows, func(x, y TraceRow) int {
		switch {
		case x.ArrivalNS < y.ArrivalNS:
			return -1
		case x.ArrivalNS > y.ArrivalNS:
			return 1
		}
		return 0
	})
	turns := make([]int, len(tr.SessionIDs))
	for i := range tr.Rows {
		if s := tr.Rows[i].Session; s >= 0 {
			turns[s]++
			tr.Rows[i].Turn = turns[s]
		}
	}
	return tr, nil
}

// LoadTrace reads a trace, choosing the format by extension: .csv, .jsonl / .ndjson, or
// .parquet. Errors name the file, the line (or row) and the column.
func LoadTrace(path string) (*Trace, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".csv", ".jsonl", ".ndjson", ".parquet":
	default:
		return nil, fmt.Errorf("%s: unknown trace format %q (want .csv, .jsonl or .parquet)", path, ext)
	}
	f, err := safefile.Open(path, safefile.Trace)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := newTraceBuilder(path)
	switch ext {
	case ".csv":
		err = readTraceCSV(safefile.SkipBOM(f), b)
	case ".parquet":
		err = readTraceParquet(f, b)
	default:
		err = readTraceJSONL(safefile.SkipBOM(f), b)
	}
	if err != nil {
		return nil, err
	}
	return b.finish()
}

// checkColumns rejects unknown and duplicate columns and requires the mandatory ones.
func checkColumns(cols []string, where string) error {
	seen := map[string]bool{}
	for _, c := range cols {
		if !slices.Contains(traceColumns, c) {
			return fmt.Errorf("%s: unknown column %s (known: %s)", where, safefile.Quote(c), strings.Join(traceColumns, ", "))
		}
		if seen[c] {
			return fmt.Errorf("%s: duplicate column %s", where, safefile.Quote(c))
		}
		seen[c] = true
	}
	for _, c := range traceColumns[:3] {
		if !seen[c] {
			return fmt.Errorf("%s: missing required column %q", where, c)
		}
	}
	return nil
}

// setField parses one textual cell into r; its error is the reason alone (the caller
// says where). An empty value of an optional column means "absent".
func setField(r *rawRow, col, v string) error {
	var err error
	switch col {
	case colArrival:
		r.arrivalS, err = strconv.ParseFloat(v, 64)
	case colPrompt:
		r.prompt, err = strconv.ParseInt(v, 10, 64)
	case colOutput:
		r.output, err = strconv.ParseInt(v, 10, 64)
	case colPrefixID:
		r.prefixID = v
	case colPrefixTokens:
		if v != "" {
			r.prefixTokens, err = strconv.ParseInt(v, 10, 64)
			r.hasPrefixTok = true
		}
	case colSessionID:
		r.sessionID = v
	case colClient:
		r.client = v
	}
	if err != nil {
		kind := "an integer"
		if col == colArrival {
			kind = "a number"
		}
		return fmt.Errorf("want %s, got %s", kind, safefile.Quote(v))
	}
	return nil
}

// readTraceCSV reads a CSV trace with a header row; lines starting with '#' are skipped.
// Cell errors name file:line:column (internal/table).
func readTraceCSV(f io.Reader, b *traceBuilder) error {
	t, err := table.Open(f, b.tr.Path, table.Options{Comment: '#', TrimLeadingSpace: true,
		Required: traceColumns[:3], Known: traceColumns[3:]})
	if err != nil {
		return err
	}
	header := t.Header()
	for t.Next() {
		line := t.Line()
		var r rawRow
		for _, col := range header {
			if err := setField(&r, col, t.Str(col)); err != nil {
				t.Failf(col, "%v", err)
				return t.Err()
			}
		}
		if err := b.add(r, line, fmt.Sprintf("%s:%d", b.tr.Path, line)); err != nil {
			return err
		}
	}
	return t.Err()
}

// readTraceJSONL reads one JSON object per line; blank lines are skipped. Identifiers may
// be JSON strings or numbers; null means absent.
func readTraceJSONL(f io.Reader, b *traceBuilder) error {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		where := fmt.Sprintf("%s:%d", b.tr.Path, line)
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&obj); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if dec.More() {
			return fmt.Errorf("%s: more than one JSON value on the line", where)
		}
		cols := make([]string, 0, len(obj))
		for k := range obj {
			cols = append(cols, k)
		}
		slices.Sort(cols)
		if err := checkColumns(cols, where); err != nil {
			return err
		}
		var r rawRow
		for _, col := range cols {
			v, err := jsonScalar(obj[col])
			if err != nil {
				return fmt.Errorf("%s: %s: %v", where, col, err)
			}
			if v == "" && slices.Index(traceColumns, col) < 3 {
				return fmt.Errorf("%s: %s: must not be null or empty", where, col)
			}
			if err := setField(&r, col, v); err != nil {
				return fmt.Errorf("%s: %s: %w", where, col, err)
			}
		}
		if err := b.add(r, line, where); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", b.tr.Path, err)
	}
	return nil
}

// jsonScalar renders a JSON string or number as text ("" for null).
func jsonScalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'):
		return string(raw), nil
	}
	return "", errors.New("want a string or a number")
}

// TraceParquetRow is the Parquet schema of a trace: identifiers are optional strings,
// counts are int64, arrival_s is a double. Files whose physical types differ are
// converted where parquet-go can.
type TraceParquetRow struct {
	ArrivalS     float64 `parquet:"arrival_s"`
	PromptTokens int64   `parquet:"prompt_tokens"`
	OutputTokens int64   `parquet:"output_tokens"`
	PrefixID     *string `parquet:"prefix_id,optional"`
	PrefixTokens *int64  `parquet:"prefix_tokens,optional"`
	SessionID    *string `parquet:"session_id,optional"`
	Client       *string `parquet:"client,optional"`
}

// TraceColumnTypeError is a Parquet trace column whose physical type cannot hold its
// values without loss: a count column (prompt_tokens, output_tokens, prefix_tokens)
// must be INT32 or INT64 (a FLOAT or DOUBLE column is refused even when its values are
// whole, since the conversion would silently truncate 100.7 to 100; a BOOLEAN would
// read true as 1), arrival_s must be numeric, identifiers must be strings (BYTE_ARRAY)
// or integers. Every row has the column's type, so Row is the first row (1).
type TraceColumnTypeError struct {
	Path, Column, Type, Want string
	Row                      int
}

func (e *TraceColumnTypeError) Error() string {
	return fmt.Sprintf("%s: row %d: column %s has Parquet type %s, want %s", e.Path, e.Row, e.Column, e.Type, e.Want)
}

// checkParquetTypes refuses a trace column whose physical type the generic reader
// would convert lossily (see TraceColumnTypeError).
func checkParquetTypes(s *parquet.Schema, path string) error {
	for _, f := range s.Fields() {
		if !f.Leaf() {
			return &TraceColumnTypeError{Path: path, Column: f.Name(), Type: "group", Want: "a leaf column", Row: 1}
		}
		kind := f.Type().Kind()
		var ok bool
		var want string
		switch f.Name() {
		case colPrompt, colOutput, colPrefixTokens:
			ok, want = kind == parquet.Int32 || kind == parquet.Int64, "INT32 or INT64"
		case colArrival:
			ok, want = kind == parquet.Int32 || kind == parquet.Int64 || kind == parquet.Float || kind == parquet.Double, "a numeric type (INT32, INT64, FLOAT or DOUBLE)"
		default: // identifiers
			ok, want = kind == parquet.ByteArray || kind == parquet.Int32 || kind == parquet.Int64, "BYTE_ARRAY (string), INT32 or INT64"
		}
		if !ok {
			return &TraceColumnTypeError{Path: path, Column: f.Name(), Type: kind.String(), Want: want, Row: 1}
		}
	}
	return nil
}

// readTraceParquet reads a Parquet trace with the generic reader. A panic inside the
// Parquet library on a malformed file is returned as an error.
func readTraceParquet(f *safefile.File, b *traceBuilder) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: reading parquet: %v", b.tr.Path, p)
		}
	}()
	pf, err := parquet.OpenFile(f, f.Size())
	if err != nil {
		return fmt.Errorf("%s: %w", b.tr.Path, err)
	}
	var cols []string
	for _, fld := range pf.Schema().Fields() {
		cols = append(cols, fld.Name())
	}
	if err := checkColumns(cols, b.tr.Path); err != nil {
		return err
	}
	if err := checkParquetTypes(pf.Schema(), b.tr.Path); err != nil {
		return err
	}
	// The reader converts the file's columns to TraceParquetRow's schema; optional
	// columns absent from the file read as nil.
	rd := parquet.NewGenericReader[TraceParquetRow](f)
	defer rd.Close()
	buf := make([]TraceParquetRow, 256)
	row := 0
	for {
		n, err := rd.Read(buf)
		for _, p := range buf[:n] {
			row++
			where := fmt.Sprintf("%s: row %d", b.tr.Path, row)
			r := rawRow{arrivalS: p.ArrivalS, prompt: p.PromptTokens, output: p.OutputTokens}
			if p.PrefixID != nil {
				r.prefixID = *p.PrefixID
			}
			if p.PrefixTokens != nil {
				r.prefixTokens, r.hasPrefixTok = *p.PrefixTokens, true
			}
			if p.SessionID != nil {
				r.sessionID = *p.SessionID
			}
			if p.Client != nil {
				r.client = *p.Client
			}
			if err := b.add(r, row, where); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: row %d: %w", b.tr.Path, row+1, err)
		}
	}
}

// NewTraceGenerator returns a Generator that replays tr: NextArrival yields its rows in
// order, OnComplete yields nothing. seed only salts the content keys. Totals is exact.
func NewTraceGenerator(tr *Trace, seed uint64) *Generator {
	return &Generator{
		seed:       seed,
		trace:      tr,
		cutoffNS:   math.MaxInt64,
		total:      len(tr.Rows),
		totalKnown: true,
	}
}

// nextTraceArrival turns the next trace row into a request.
func (g *Generator) nextTraceArrival() (Request, bool) {
	if g.tracePos >= len(g.trace.Rows) {
		return Request{}, false
	}
	row := &g.trace.Rows[g.tracePos]
	if row.ArrivalNS >= g.cutoffNS {
		g.tracePos = len(g.trace.Rows)
		return Request{}, false
	}
	g.tracePos++
	r := Request{
		ID:           g.nextID,
		Client:       row.Client,
		ArrivalNS:    row.ArrivalNS,
		PromptTokens: row.PromptTokens,
		OutputTokens: row.OutputTokens,
		Turn:         row.Turn,
	}
	g.nextID++
	if row.Prefix >= 0 {
		r.Segments = append(r.Segments, Segment{
			Key:    contentKey(g.seed, traceClient, keyKindPrefix, uint64(row.Prefix)),
			Tokens: row.PrefixTokens,
		})
	}
	if row.Session >= 0 {
		r.SessionID = uint64(row.Session) + 1
		if n := row.PromptTokens - row.PrefixTokens; n > 0 {
			r.Segments = append(r.Segments, Segment{
				Key:    contentKey(g.seed, traceClient, keyKindSession, uint64(row.Session)),
				Tokens: n,
			})
		}
	}
	return r, true
}
