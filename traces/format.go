package traces

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format names an output format for records.
type Format string

// The supported formats.
const (
	CSV     Format = "csv"     // RFC 4180 CSV with a header row
	JSONL   Format = "jsonl"   // one JSON object per line
	Parquet Format = "parquet" // Apache Parquet, Snappy-compressed
)

// ParseFormat parses a format name (case-insensitive, surrounding space
// ignored): "csv", "jsonl" or "parquet".
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case CSV, JSONL, Parquet:
		return f, nil
	}
	return "", fmt.Errorf("format %q: unknown (want csv, jsonl or parquet)", s)
}

// FormatFromPath picks the format from a file name's extension: .csv,
// .jsonl (or .ndjson) and .parquet, case-insensitive.
func FormatFromPath(path string) (Format, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".csv":
		return CSV, nil
	case ".jsonl", ".ndjson":
		return JSONL, nil
	case ".parquet":
		return Parquet, nil
	default:
		return "", fmt.Errorf("path %q: cannot tell the format from extension %q (want .csv, .jsonl or .parquet)", path, ext)
	}
}
