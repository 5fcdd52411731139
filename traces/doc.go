// Package traces holds what a simulation run produces: one RequestRecord per
// request, one StepRecord per engine step, streaming summary statistics over
// them, and writers and readers for CSV, JSON Lines and Parquet.
//
// Reading order:
//
//   - record.go: the two record types, their column order and the metric
//     definitions (TTFT, TPOT, E2E, queue) in RequestRecord.FillLatencies.
//   - format.go: the Format names and how a path picks one.
//   - writer.go, csv.go, jsonl.go, parquet.go: streaming writers with bounded
//     buffers; reader.go reads any format back (for tests and validation).
//   - sketch.go: a DDSketch-style quantile sketch with bounded memory and a
//     relative-accuracy guarantee.
//   - summary.go, collector.go: the run summary (Dist, Summary) and the
//     Collector that builds it in O(clients) memory, independent of the number
//     of requests.
//
// Conventions shared by every format: times are seconds of simulated time since
// the run start (fields ending in S), latencies are milliseconds (fields ending
// in ms). A NaN float means "undefined" (for example TPOT of a one-token
// output, or the first-token time of a rejected request); it is written as an
// empty CSV field, a JSON null and a Parquet null, and read back as NaN.
// Infinite floats are rejected by the writers. Floats in CSV and JSON Lines
// are formatted with strconv.FormatFloat(x, 'g', -1, 64): the shortest text
// that parses back to the identical float64, so output is byte-identical for
// identical inputs and every value round-trips exactly. CSV strings are
// quoted only when they contain a comma, quote, CR or LF; as with any
// encoding/csv reader, a CR LF inside a quoted string reads back as LF.
package traces
