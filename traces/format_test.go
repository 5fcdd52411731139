package traces

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		err  string
	}{
		{"csv", CSV, ""},
		{" JSONL ", JSONL, ""},
		{"Parquet", Parquet, ""},
		{"xml", "", `format "xml": unknown (want csv, jsonl or parquet)`},
		{"", "", "unknown"},
	} {
		got, err := ParseFormat(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseFormat(%q) error = %v, want containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestFormatFromPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Format
		ok   bool
	}{
		{"out/requests.csv", CSV, true},
		{"r.JSONL", JSONL, true},
		{"r.ndjson", JSONL, true},
		{"/tmp/x.parquet", Parquet, true},
		{"r.json", "", false},
		{"noext", "", false},
	} {
		got, err := FormatFromPath(tc.path)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("FormatFromPath(%q) = %q, %v; want %q ok=%v", tc.path, got, err, tc.want, tc.ok)
		}
	}
}

func TestUnknownFormatWriters(t *testing.T) {
	if _, err := NewRequestWriter(nil, "xml"); err == nil {
		t.Error("NewRequestWriter(xml): want error")
	}
	if _, err := NewStepWriter(nil, "xml"); err == nil {
		t.Error("NewStepWriter(xml): want error")
	}
	if _, err := ReadRequests(strings.NewReader(""), "xml"); err == nil {
		t.Error("ReadRequests(xml): want error")
	}
}
