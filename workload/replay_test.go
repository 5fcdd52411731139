package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// traceFixture is the content every format encodes; row 3 is out of order on purpose.
var traceFixture = []struct {
	arrival         float64
	prompt, output  int64
	prefixID        string
	prefixTok       int64
	session, client string
}{
	{0.0, 500, 20, "sys", 100, "", "alice"},
	{0.5, 300, 10, "", 0, "s1", "bob"},
	{1.25, 600, 30, "sys", 100, "", "alice"},
	{1.0, 800, 15, "", 0, "s1", "bob"},
	{2.0, 150, 5, "other", 50, "s2", ""},
}

// wantRows is the fixture after loading: sorted by arrival, identifiers interned.
func checkTrace(t *testing.T, tr *Trace) {
	t.Helper()
	want := []TraceRow{
		{ArrivalNS: 0, PromptTokens: 500, OutputTokens: 20, Prefix: 0, PrefixTokens: 100, Session: -1, Client: 0},
		{ArrivalNS: 5e8, PromptTokens: 300, OutputTokens: 10, Prefix: -1, Session: 0, Turn: 1, Client: 1},
		{ArrivalNS: 1e9, PromptTokens: 800, OutputTokens: 15, Prefix: -1, Session: 0, Turn: 2, Client: 1},
		{ArrivalNS: 125e7, PromptTokens: 600, OutputTokens: 30, Prefix: 0, PrefixTokens: 100, Session: -1, Client: 0},
		{ArrivalNS: 2e9, PromptTokens: 150, OutputTokens: 5, Prefix: 1, PrefixTokens: 50, Session: 1, Turn: 1, Client: 0},
	}
	got := make([]TraceRow, len(tr.Rows))
	for i, r := range tr.Rows {
		r.Line = 0
		got[i] = r
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(tr.PrefixIDs, []string{"sys", "other"}) || !reflect.DeepEqual(tr.SessionIDs, []string{"s1", "s2"}) ||
		!reflect.DeepEqual(tr.Clients, []string{"alice", "bob"}) {
		t.Errorf("ids: prefixes %v sessions %v clients %v", tr.PrefixIDs, tr.SessionIDs, tr.Clients)
	}
}

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func fixtureCSV() string {
	var b strings.Builder
	b.WriteString("arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens,session_id,client\n")
	for _, r := range traceFixture {
		pt := ""
		if r.prefixID != "" {
			pt = strconv.FormatInt(r.prefixTok, 10)
		}
		b.WriteString(strings.Join([]string{strconv.FormatFloat(r.arrival, 'g', -1, 64),
			strconv.FormatInt(r.prompt, 10), strconv.FormatInt(r.output, 10), r.prefixID, pt, r.session, r.client}, ",") + "\n")
	}
	return b.String()
}

func TestLoadTraceCSV(t *testing.T) {
	tr, err := LoadTrace(writeFile(t, "t.csv", fixtureCSV()))
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr)
}

func TestLoadTraceJSONL(t *testing.T) {
	var b strings.Builder
	for i, r := range traceFixture {
		m := map[string]any{"arrival_s": r.arrival, "prompt_tokens": r.prompt, "output_tokens": r.output}
		if r.prefixID != "" {
			m["prefix_id"], m["prefix_tokens"] = r.prefixID, r.prefixTok
		}
		if r.session != "" {
			m["session_id"] = r.session
		}
		if r.client != "" {
			m["client"] = r.client
		} else {
			m["client"] = nil
		}
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteString("\n")
		if i == 1 {
			b.WriteString("\n") // blank lines are skipped
		}
	}
	tr, err := LoadTrace(writeFile(t, "t.jsonl", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr)
}

func TestLoadTraceParquet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[TraceParquetRow](f)
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for _, r := range traceFixture {
		row := TraceParquetRow{ArrivalS: r.arrival, PromptTokens: r.prompt, OutputTokens: r.output,
			PrefixID: str(r.prefixID), SessionID: str(r.session), Client: str(r.client)}
		if r.prefixID != "" {
			v := r.prefixTok
			row.PrefixTokens = &v
		}
		if _, err := w.Write([]TraceParquetRow{row}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tr, err := LoadTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr)
}

// Parquet traces with only the required columns, an unknown column, or other types.
func TestLoadTraceParquetSchemas(t *testing.T) {
	type minimal struct {
		ArrivalS     float64 `parquet:"arrival_s"`
		PromptTokens int64   `parquet:"prompt_tokens"`
		OutputTokens int64   `parquet:"output_tokens"`
	}
	p := filepath.Join(t.TempDir(), "m.parquet")
	if err := parquet.WriteFile(p, []minimal{{0, 10, 2}, {1, 20, 3}}); err != nil {
		t.Fatal(err)
	}
	tr, err := LoadTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Rows) != 2 || tr.Rows[1].PromptTokens != 20 || tr.Rows[1].Prefix != -1 || tr.Rows[1].Session != -1 {
		t.Errorf("rows %+v", tr.Rows)
	}
	type extra struct {
		ArrivalS     float64 `parquet:"arrival_s"`
		PromptTokens int64   `parquet:"prompt_tokens"`
		OutputTokens int64   `parquet:"output_tokens"`
		Bogus        int64   `parquet:"bogus"`
	}
	p = filepath.Join(t.TempDir(), "x.parquet")
	if err := parquet.WriteFile(p, []extra{{0, 10, 2, 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTrace(p); err == nil || !strings.Contains(err.Error(), `unknown column "bogus"`) {
		t.Errorf("unknown parquet column: err = %v", err)
	}
	// Other physical types (float32 time, int32 counts, integer ids) are converted.
	type narrow struct {
		ArrivalS     float32 `parquet:"arrival_s"`
		PromptTokens int32   `parquet:"prompt_tokens"`
		OutputTokens int32   `parquet:"output_tokens"`
		SessionID    int64   `parquet:"session_id"`
	}
	p = filepath.Join(t.TempDir(), "n.parquet")
	if err := parquet.WriteFile(p, []narrow{{0.5, 10, 2, 7}, {1, 20, 3, 7}}); err != nil {
		t.Fatal(err)
	}
	tr, err = LoadTrace(p)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rows[0].ArrivalNS != 5e8 || tr.Rows[1].Turn != 2 || !reflect.DeepEqual(tr.SessionIDs, []string{"7"}) {
		t.Errorf("converted rows %+v, sessions %v", tr.Rows, tr.SessionIDs)
	}
}

func TestLoadTraceErrors(t *testing.T) {
	const h = "arrival_s,prompt_tokens,output_tokens\n"
	cases := []struct{ name, file, data, want string }{
		{"extension", "t.txt", h, `unknown trace format ".txt"`},
		{"empty", "t.csv", "", "empty file"},
		{"header only", "t.csv", h, "no requests"},
		{"unknown column", "t.csv", "arrival_s,prompt_tokens,output_tokens,color\n", `t.csv:1:39: unknown column "color"`},
		{"missing column", "t.csv", "arrival_s,prompt_tokens\n", `t.csv:1: missing required column "output_tokens"`},
		{"duplicate column", "t.csv", "arrival_s,prompt_tokens,output_tokens,client,client\n", `duplicate column "client"`},
		{"bad number", "t.csv", h + "0,10,5\nsoon,10,5\n", `t.csv:3:1: arrival_s: want a number, got "soon"`},
		{"bad int", "t.csv", h + "0,10.5,5\n", `t.csv:2:3: prompt_tokens: want an integer, got "10.5"`},
		{"negative arrival", "t.csv", h + "-1,10,5\n", "t.csv:2: arrival_s: must be a number in [0, 1e9]"},
		{"zero prompt", "t.csv", h + "0,0,5\n", "t.csv:2: prompt_tokens: must be in [1, 2147483647], got 0"},
		{"zero output", "t.csv", h + "0,5,0\n", "t.csv:2: output_tokens: must be in [1, 2147483647], got 0"},
		{"wrong field count", "t.csv", h + "0,5\n", "t.csv"},
		{"prefix without tokens", "t.csv", h[:len(h)-1] + ",prefix_id\n0,5,1,p\n", "t.csv:2: prefix_tokens: required with prefix_id"},
		{"tokens without prefix", "t.csv", h[:len(h)-1] + ",prefix_tokens\n0,5,1,3\n", "t.csv:2: prefix_tokens: given without prefix_id"},
		{"prefix too long", "t.csv", h[:len(h)-1] + ",prefix_id,prefix_tokens\n0,5,1,p,6\n", "t.csv:2: prefix_tokens: must be in [1, prompt_tokens=5]"},
		{"jsonl syntax", "t.jsonl", `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1}` + "\n{oops\n", "t.jsonl:2:"},
		{"jsonl unknown key", "t.jsonl", `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1, "x": 1}`, `t.jsonl:1: unknown column "x"`},
		{"jsonl missing key", "t.jsonl", `{"arrival_s": 0, "prompt_tokens": 1}`, `t.jsonl:1: missing required column "output_tokens"`},
		{"jsonl null required", "t.jsonl", `{"arrival_s": null, "prompt_tokens": 1, "output_tokens": 1}`, "t.jsonl:1: arrival_s: must not be null"},
		{"jsonl object id", "t.jsonl", `{"arrival_s": 0, "prompt_tokens": 1, "output_tokens": 1, "session_id": {}}`, "t.jsonl:1: session_id: want a string or a number"},
		{"parquet garbage", "t.parquet", "not parquet at all", "t.parquet"},
		{"too many clients", "t.csv", manyClients(maxClients + 1), fmt.Sprintf("t.csv:%d: client: more than %d distinct clients", maxClients+2, maxClients)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadTrace(writeFile(t, tc.file, tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("LoadTrace = %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestTraceGenerator(t *testing.T) {
	tr, err := LoadTrace(writeFile(t, "t.csv", fixtureCSV()))
	if err != nil {
		t.Fatal(err)
	}
	g := NewTraceGenerator(tr, 3)
	if n, known := g.Totals(); !known || n != 5 {
		t.Errorf("Totals = %d, %v", n, known)
	}
	var reqs []Request
	for {
		r, ok := g.NextArrival()
		if !ok {
			break
		}
		if _, more := g.OnComplete(r, r.ArrivalNS+1); more {
			t.Error("trace replay must not generate follow-ups")
		}
		reqs = append(reqs, r)
	}
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	// Rows 0 and 3 share prefix "sys": 100 tokens in common.
	if got := reqs[0].SharedPrefixTokens(&reqs[3]); got != 100 {
		t.Errorf("prefix sharing %d tokens, want 100", got)
	}
	// Session s1: turn 2 (800 tokens) contains turn 1's 300-token prompt.
	if reqs[1].SessionID == 0 || reqs[1].SessionID != reqs[2].SessionID || reqs[2].Turn != 2 {
		t.Errorf("session fields: %+v %+v", reqs[1], reqs[2])
	}
	if got := reqs[2].SharedPrefixTokens(&reqs[1]); got != 300 {
		t.Errorf("session sharing %d tokens, want 300", got)
	}
	// Row 4: prefix "other" (50) then its session covering the remaining 100 tokens.
	if s := reqs[4].Segments; len(s) != 2 || s[0].Tokens != 50 || s[1].Tokens != 100 || s[0].Key == reqs[0].Segments[0].Key {
		t.Errorf("row 4 segments %+v", s)
	}
	if reqs[0].Segments[0].Key == reqs[1].Segments[0].Key {
		t.Error("prefix and session keys collide")
	}
}

func TestSpecWithTrace(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "t.csv"), []byte(fixtureCSV()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(w, []byte("seed: 1\nduration: 1.1s\ntrace: t.csv\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(w)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGenerator(s, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, ok := g.NextArrival(); !ok {
			break
		}
		n++
	}
	// Arrivals at 0, 0.5 and 1.0 s fall before the 1.1 s cut-off.
	if total, known := g.Totals(); n != 3 || !known || total != 3 {
		t.Errorf("replayed %d requests (Totals %d, %v), want 3", n, total, known)
	}
}

// manyClients is a CSV trace of n one-request clients.
func manyClients(n int) string {
	var b strings.Builder
	b.WriteString("arrival_s,prompt_tokens,output_tokens,client\n")
	for i := range n {
		fmt.Fprintf(&b, "0,1,1,c%d\n", i)
	}
	return b.String()
}

// A count column of a non-integer Parquet type is refused (it would be truncated: 100.7
// read as 100, true read as 1), naming the file, the column and the first row.
func TestLoadTraceParquetRefusesNonIntegerCounts(t *testing.T) {
	type floatPrompt struct {
		ArrivalS     float64 `parquet:"arrival_s"`
		PromptTokens float64 `parquet:"prompt_tokens"`
		OutputTokens int64   `parquet:"output_tokens"`
	}
	type boolOutput struct {
		ArrivalS     float64 `parquet:"arrival_s"`
		PromptTokens int64   `parquet:"prompt_tokens"`
		OutputTokens bool    `parquet:"output_tokens"`
	}
	type stringPrefix struct {
		ArrivalS     float64 `parquet:"arrival_s"`
		PromptTokens int64   `parquet:"prompt_tokens"`
		OutputTokens int64   `parquet:"output_tokens"`
		PrefixID     string  `parquet:"prefix_id"`
		PrefixTokens string  `parquet:"prefix_tokens"`
	}
	type boolArrival struct {
		ArrivalS     bool  `parquet:"arrival_s"`
		PromptTokens int64 `parquet:"prompt_tokens"`
		OutputTokens int64 `parquet:"output_tokens"`
	}
	dir := t.TempDir()
	cases := []struct {
		name, col, typ string
		write          func(p string) error
	}{
		{"float.parquet", "prompt_tokens", "DOUBLE", func(p string) error {
			return parquet.WriteFile(p, []floatPrompt{{0, 100.7, 2}})
		}},
		{"bool.parquet", "output_tokens", "BOOLEAN", func(p string) error {
			return parquet.WriteFile(p, []boolOutput{{0, 10, true}})
		}},
		{"string.parquet", "prefix_tokens", "BYTE_ARRAY", func(p string) error {
			return parquet.WriteFile(p, []stringPrefix{{0, 10, 2, "a", "5"}})
		}},
		{"arrival.parquet", "arrival_s", "BOOLEAN", func(p string) error {
			return parquet.WriteFile(p, []boolArrival{{true, 10, 2}})
		}},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := c.write(p); err != nil {
			t.Fatal(err)
		}
		tr, err := LoadTrace(p)
		if err == nil {
			t.Errorf("%s: loaded %+v, want an error", c.name, tr.Rows)
			continue
		}
		var te *TraceColumnTypeError
		if !errors.As(err, &te) {
			t.Errorf("%s: err = %v, want a *TraceColumnTypeError", c.name, err)
			continue
		}
		if te.Path != p || te.Column != c.col || te.Type != c.typ || te.Row != 1 {
			t.Errorf("%s: error %+v, want path %s column %s type %s row 1", c.name, te, p, c.col, c.typ)
		}
	}
}
