package traces

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var allFormats = []Format{CSV, JSONL, Parquet}

func writeRequests(t testing.TB, f Format, recs []RequestRecord) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewRequestWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatalf("%s: Write(%d): %v", f, i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: Close: %v", f, err)
	}
	return buf.Bytes()
}

func writeSteps(t testing.TB, f Format, recs []StepRecord) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewStepWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatalf("%s: Write(%d): %v", f, i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: Close: %v", f, err)
	}
	return buf.Bytes()
}

func TestRequestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 5000} {
		recs := testRequests(n)
		for _, f := range allFormats {
			data := writeRequests(t, f, recs)
			got, err := ReadRequests(bytes.NewReader(data), f)
			if err != nil {
				t.Fatalf("%s n=%d: read: %v", f, n, err)
			}
			if len(got) != len(recs) {
				t.Fatalf("%s n=%d: read %d records", f, n, len(got))
			}
			for i := range recs {
				if !same(got[i], recs[i]) {
					t.Fatalf("%s record %d:\n got %+v\nwant %+v", f, i, got[i], recs[i])
				}
			}
		}
	}
}

func TestRoundTripCoversEdgeCases(t *testing.T) {
	recs := testRequests(20)
	var nanTPOT, rejected bool
	for _, r := range recs {
		nanTPOT = nanTPOT || (r.Status == StatusOK && math.IsNaN(r.TPOTms))
		rejected = rejected || r.Status != StatusOK
	}
	if !nanTPOT || !rejected {
		t.Fatalf("test data lacks a NaN TPOT (%v) or a rejected record (%v)", nanTPOT, rejected)
	}
}

func TestStepRoundTrip(t *testing.T) {
	recs := testSteps(3000)
	for _, f := range allFormats {
		got, err := ReadSteps(bytes.NewReader(writeSteps(t, f, recs)), f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(got) != len(recs) {
			t.Fatalf("%s: read %d of %d", f, len(got), len(recs))
		}
		for i := range recs {
			if !same(got[i], recs[i]) {
				t.Fatalf("%s step %d:\n got %+v\nwant %+v", f, i, got[i], recs[i])
			}
		}
	}
}

func TestFileReaders(t *testing.T) {
	dir := t.TempDir()
	reqs, steps := testRequests(500), testSteps(500)
	for _, f := range allFormats {
		rp := filepath.Join(dir, "requests."+string(f))
		sp := filepath.Join(dir, "steps."+string(f))
		if err := os.WriteFile(rp, writeRequests(t, f, reqs), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sp, writeSteps(t, f, steps), 0o644); err != nil {
			t.Fatal(err)
		}
		gr, err := ReadRequestsFile(rp)
		if err != nil || len(gr) != len(reqs) || !same(gr[499], reqs[499]) {
			t.Errorf("ReadRequestsFile(%s): %d records, err %v", rp, len(gr), err)
		}
		gs, err := ReadStepsFile(sp)
		if err != nil || len(gs) != len(steps) || !same(gs[499], steps[499]) {
			t.Errorf("ReadStepsFile(%s): %d records, err %v", sp, len(gs), err)
		}
	}
	if _, err := ReadRequestsFile(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("unknown extension: want error")
	}
	bad := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(bad, []byte("not parquet at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRequestsFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed parquet: err = %v, want one naming the path", err)
	}
}

func TestCSVHeaderExact(t *testing.T) {
	const wantReq = "id,client,arrival_s,first_scheduled_s,first_token_s,finish_s,prompt_tokens,cached_tokens,output_tokens,ttft_ms,tpot_ms,e2e_ms,queue_ms,preemptions,replica,status\n"
	const wantStep = "replica,time_s,duration_s,prefill_tokens,decode_requests,batch_size,kv_blocks_used,kv_blocks_total,compute_s,memory_s,comm_s,overhead_s,preempted\n"
	if got := string(writeRequests(t, CSV, nil)); got != wantReq {
		t.Errorf("request header:\n got %q\nwant %q", got, wantReq)
	}
	if got := string(writeSteps(t, CSV, nil)); got != wantStep {
		t.Errorf("step header:\n got %q\nwant %q", got, wantStep)
	}
}

// TestGoldenLines pins the exact text of one record in each text format.
func TestGoldenLines(t *testing.T) {
	r := RequestRecord{
		ID: 7, Client: `a,"b"`, Replica: 1, ArrivalS: 0.5, FirstScheduledS: 0.5, FirstTokenS: 0.625, FinishS: 0.625,
		PromptTokens: 128, CachedTokens: 64, OutputTokens: 1, Status: StatusOK,
	}
	r.FillLatencies()
	csvText := string(writeRequests(t, CSV, []RequestRecord{r}))
	wantCSV := `7,"a,""b""",0.5,0.5,0.625,0.625,128,64,1,125,,125,0,0,1,ok` + "\n"
	if line := csvText[strings.IndexByte(csvText, '\n')+1:]; line != wantCSV {
		t.Errorf("csv line:\n got %q\nwant %q", line, wantCSV)
	}
	wantJSON := `{"id":7,"client":"a,\"b\"","arrival_s":0.5,"first_scheduled_s":0.5,"first_token_s":0.625,"finish_s":0.625,"prompt_tokens":128,"cached_tokens":64,"output_tokens":1,"ttft_ms":125,"tpot_ms":null,"e2e_ms":125,"queue_ms":0,"preemptions":0,"replica":1,"status":"ok"}` + "\n"
	if got := string(writeRequests(t, JSONL, []RequestRecord{r})); got != wantJSON {
		t.Errorf("jsonl line:\n got %s\nwant %s", got, wantJSON)
	}
}

func TestDeterministicBytes(t *testing.T) {
	reqs, steps := testRequests(5000), testSteps(5000)
	for _, f := range allFormats {
		if a, b := writeRequests(t, f, reqs), writeRequests(t, f, reqs); !bytes.Equal(a, b) {
			t.Errorf("%s: two request writes differ (%d vs %d bytes)", f, len(a), len(b))
		}
		if a, b := writeSteps(t, f, steps), writeSteps(t, f, steps); !bytes.Equal(a, b) {
			t.Errorf("%s: two step writes differ", f)
		}
	}
}

func TestWriterRejectsInfinity(t *testing.T) {
	for _, f := range allFormats {
		var buf bytes.Buffer
		w, _ := NewRequestWriter(&buf, f)
		good := testRequests(2)
		bad := good[0]
		bad.E2Ems = math.Inf(1)
		if err := w.Write(&bad); err == nil || !strings.Contains(err.Error(), `"e2e_ms"`) {
			t.Errorf("%s: Write(+Inf e2e) error = %v, want one naming e2e_ms", f, err)
		}
		// The refused record leaves the stream usable.
		if err := w.Write(&good[1]); err != nil {
			t.Errorf("%s: Write after refusal: %v", f, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := ReadRequests(&buf, f)
		if err != nil || len(got) != 1 || !same(got[0], good[1]) {
			t.Errorf("%s: after refusal read %d records, err %v", f, len(got), err)
		}
		if err := w.Write(&good[1]); !errors.Is(err, errClosed) {
			t.Errorf("%s: Write after Close = %v, want errClosed", f, err)
		}
		if err := w.Close(); !errors.Is(err, errClosed) {
			t.Errorf("%s: second Close = %v, want errClosed", f, err)
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsIOError(t *testing.T) {
	recs := testRequests(3000) // more than the CSV/JSONL buffer and a Parquet batch
	for _, f := range allFormats {
		w, _ := NewRequestWriter(failWriter{}, f)
		var err error
		for i := range recs {
			if err = w.Write(&recs[i]); err != nil {
				break
			}
		}
		if err == nil {
			err = w.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: error = %v, want disk full", f, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	header := strings.Join(RequestColumns(), ",") + "\n"
	okRow := "1,c,0,0,0.1,0.2,10,0,3,100,50,200,0,0,0,ok\n"
	for _, tc := range []struct {
		name string
		f    Format
		in   string
		want string
	}{
		{"csv empty", CSV, "", "missing header"},
		{"csv wrong header", CSV, strings.Replace(header, "tpot_ms", "tpot", 1), `header column 11 is "tpot", want "tpot_ms"`},
		{"csv short header", CSV, "id,client\n", "header has 2 columns, want 16"},
		{"csv bad float", CSV, header + okRow + strings.Replace(okRow, "100", "fast", 1), `csv:3:24: ttft_ms: "fast" is not a number`},
		{"csv bad int", CSV, header + strings.Replace(okRow, ",10,", ",1.5,", 1), `csv:2:17: prompt_tokens: "1.5" is not an integer`},
		{"csv negative id", CSV, header + "-1" + okRow[1:], `csv:2:1: id: "-1" is not an unsigned integer`},
		{"csv inf", CSV, header + strings.Replace(okRow, "200", "+Inf", 1), `csv:2:31: e2e_ms: +Inf is not allowed`},
		{"csv field count", CSV, header + "1,2,3\n", "wrong number of fields"},
		{"jsonl not json", JSONL, "{nope}\n", "jsonl line 1"},
		{"jsonl array", JSONL, "[1]\n", "jsonl line 1"},
		{"jsonl null", JSONL, "null\n", "want a JSON object"},
		{"jsonl missing", JSONL, `{"id":1}`, `column "client": missing`},
		{"jsonl string number", JSONL, `{"id":"1"}`, `column "id": "1" is not an unsigned integer`},
		{"parquet garbage", Parquet, "PAR1 garbage", "parquet"},
	} {
		_, err := ReadRequests(strings.NewReader(tc.in), tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want containing %q", tc.name, err, tc.want)
		}
	}
}

func TestJSONLUnknownColumn(t *testing.T) {
	data := writeRequests(t, JSONL, testRequests(2))
	lines := strings.SplitAfter(string(data), "\n")
	lines[1] = strings.Replace(lines[1], `{"id"`, `{"extra":1,"id"`, 1)
	_, err := ReadRequests(strings.NewReader(strings.Join(lines, "")), JSONL)
	if err == nil || !strings.Contains(err.Error(), `jsonl line 2: column "extra": unknown`) {
		t.Errorf("error = %v", err)
	}
}

func TestFillLatencies(t *testing.T) {
	// Arrival 1 s, scheduled 1.25 s, first token 1.5 s, finish 3.5 s, 5 tokens:
	// TTFT 500 ms, E2E 2500 ms, TPOT (2500-500)/4 = 500 ms, queue 250 ms.
	r := RequestRecord{ArrivalS: 1, FirstScheduledS: 1.25, FirstTokenS: 1.5, FinishS: 3.5, OutputTokens: 5, Status: StatusOK}
	r.FillLatencies()
	if r.TTFTms != 500 || r.E2Ems != 2500 || r.TPOTms != 500 || r.QueueMs != 250 {
		t.Errorf("got TTFT %v E2E %v TPOT %v queue %v", r.TTFTms, r.E2Ems, r.TPOTms, r.QueueMs)
	}
	r.OutputTokens = 1
	r.FillLatencies()
	if !math.IsNaN(r.TPOTms) {
		t.Errorf("TPOT of a 1-token output = %v, want NaN", r.TPOTms)
	}
	r.Status = "rejected:queue_full"
	r.FillLatencies()
	if !math.IsNaN(r.TTFTms) || !math.IsNaN(r.E2Ems) || !math.IsNaN(r.QueueMs) {
		t.Errorf("rejected: latencies %v %v %v, want NaN", r.TTFTms, r.E2Ems, r.QueueMs)
	}
}
