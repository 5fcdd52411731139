package serving

import (
	"fmt"
	"io"
)

// SkipsError is a report some of whose rows could not be priced: a
// validation over the rest measures less than the table holds, so a gate
// reading it must know. None usable is always an error (Check).
type SkipsError struct {
	// Skipped and Total count the rows.
	Skipped, Total int
	// First names the first skipped row: "line 7 (Llama-3.1-70B h100_sxm
	// tp2)"; the report gives every skipped row's reason.
	First string
}

func (e *SkipsError) Error() string {
	if e.Skipped == e.Total {
		return fmt.Sprintf("none of the %d rows could be priced (first: %s)", e.Total, e.First)
	}
	return fmt.Sprintf("%d of %d rows could not be priced (first: %s); --allow-skips accepts a partial validation", e.Skipped, e.Total, e.First)
}

// Check is nil when every row was priced, or when some were skipped and
// allowSkips is set; otherwise a *SkipsError. A report with no priced row
// (or no row at all) is always a *SkipsError: its error statistics are
// over nothing and read 0 %.
func (r *Report) Check(allowSkips bool) error {
	n := len(r.Rows)
	if r.SkippedRows == 0 && n > 0 {
		return nil
	}
	if allowSkips && r.SkippedRows < n {
		return nil
	}
	e := &SkipsError{Skipped: r.SkippedRows, Total: n, First: "the table has no rows"}
	for _, row := range r.Rows {
		if row.Skipped != "" {
			e.First = rowName(row)
			break
		}
	}
	return e
}

// skipLine names a skipped row and why: "line 7 (Llama-3.1-70B h100_sxm
// tp2): reason".
func skipLine(row Result) string { return rowName(row) + ": " + row.Skipped }

// rowName names a row by its line, model, GPU and layout: "line 7
// (Llama-3.1-70B h100_sxm tp2)".
func rowName(row Result) string {
	return fmt.Sprintf("line %d (%s %s %s)", row.Row.Line, shortModel(row.Model), row.GPU, row.Row.Layout())
}

// writeNotes prints each distinct row note once, with the number of rows
// it applies to, in the order the rows first give it.
func writeNotes(w io.Writer, rows []Result) {
	count := map[string]int{}
	var order []string
	for _, r := range rows {
		if r.Note == "" {
			continue
		}
		if count[r.Note] == 0 {
			order = append(order, r.Note)
		}
		count[r.Note]++
	}
	for _, n := range order {
		fmt.Fprintf(w, "note: %s (%s)\n", n, plural(count[n], "row"))
	}
}

// plural is "1 row", "2 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// errorCells formats one metric's median, p90 and bias cells (9 wide), or
// dashes when no row was priced: an empty group has no error, not 0 %.
func errorCells(e Errors) string {
	if e.N == 0 {
		return fmt.Sprintf("%9s %9s %9s", "-", "-", "-")
	}
	return fmt.Sprintf("%9.1f %9.1f %+9.1f", e.MedianAPE, e.P90APE, e.MeanSignedPct)
}
