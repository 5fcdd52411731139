package compare

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// table returns the report as a header and rows of cells.
func (r *Report) table() ([]string, [][]string) {
	head := []string{"scope", "metric", "stat", "real", "sim", "error"}
	var cells [][]string
	for _, row := range r.Rows {
		unit := "ms"
		if row.Metric == "throughput" {
			unit = ""
		}
		stat := row.Stat
		if unit != "" {
			stat += " (" + unit + ")"
		}
		cells = append(cells, []string{row.Scope, row.Metric, stat, num(row.Real), num(row.Sim), pct(row.ErrPct)})
	}
	return head, cells
}

// sideLine describes one side.
func sideLine(s *Side) string {
	return fmt.Sprintf("%s (%s): %d completed, %d failed", s.Path, s.Kind, s.Overall.Completed, s.Overall.Failed)
}

// WriteMarkdown writes the report as a Markdown document.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Real against simulated\n\n")
	fmt.Fprintf(&b, "- real: %s\n- sim: %s\n- matching: by %s\n", sideLine(r.Real), sideLine(r.Sim), r.Matching)
	if m := r.Matched; m != nil {
		fmt.Fprintf(&b, "- %d requests matched by id (%d only real, %d only simulated); per request, median error / median absolute error:", m.Pairs, m.OnlyInReal, m.OnlyInSim)
		for _, k := range []string{TTFT, TPOT, E2E} {
			if e, ok := m.MedianErr[k]; ok {
				fmt.Fprintf(&b, " %s %s / %.1f%%;", k, pct(e), m.MedianAPE[k])
			}
		}
		b.WriteString("\n")
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "- note: %s\n", wn)
	}
	b.WriteString("\nError = (sim - real) / real. Latencies in ms.\n\n")
	head, cells := r.table()
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	for _, c := range cells {
		b.WriteString("| " + strings.Join(c, " | ") + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes the report as a standalone HTML page; plot, when not
// empty, is the file name of a CDF chart shown under the table.
func (r *Report) WriteHTML(w io.Writer, plot string) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>roofsim: real against simulated</title>\n")
	b.WriteString("<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:nth-child(-n+3),th{text-align:left}.neg{color:#1f5fa8}.pos{color:#b03a2e}</style>\n")
	b.WriteString("</head><body>\n<h1>Real against simulated</h1>\n<ul>\n")
	fmt.Fprintf(&b, "<li>real: %s</li>\n<li>sim: %s</li>\n<li>matching: by %s</li>\n",
		html.EscapeString(sideLine(r.Real)), html.EscapeString(sideLine(r.Sim)), html.EscapeString(r.Matching))
	if m := r.Matched; m != nil {
		fmt.Fprintf(&b, "<li>%d requests matched by id; per request median error / median absolute error:", m.Pairs)
		for _, k := range []string{TTFT, TPOT, E2E} {
			if e, ok := m.MedianErr[k]; ok {
				fmt.Fprintf(&b, " %s %s / %.1f%%;", k, pct(e), m.MedianAPE[k])
			}
		}
		b.WriteString("</li>\n")
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "<li>note: %s</li>\n", html.EscapeString(wn))
	}
	b.WriteString("</ul>\n<p>Error = (sim - real) / real. Latencies in ms.</p>\n<table>\n<tr>")
	head, cells := r.table()
	for _, h := range head {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for i, c := range cells {
		b.WriteString("<tr>")
		for j, v := range c {
			class := ""
			if j == len(c)-1 && !math.IsNaN(r.Rows[i].ErrPct) {
				class = " class=\"pos\""
				if r.Rows[i].ErrPct < 0 {
					class = " class=\"neg\""
				}
			}
			fmt.Fprintf(&b, "<td%s>%s</td>", class, html.EscapeString(v))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
	if plot != "" {
		fmt.Fprintf(&b, "<p><img src=\"%s\" alt=\"CDFs of TTFT, TPOT, ITL and E2E, real against simulated\"></p>\n", html.EscapeString(plot))
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
