package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// termSafe returns s with every control character escaped in Go's
// notation (ESC as \x1b, a C1 control such as U+009B as \u009b, a stray
// byte 0x9b as \x9b), so that names from input files (client, model, GPU
// names and paths) print as text and never act on the terminal (move the
// cursor, recolour, set the title). keep lists the control characters
// left as they are ("\n\t" for multi-line text; "" for a table cell).
func termSafe(s, keep string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if escapeRune(r, n, s[i]) && !strings.ContainsRune(keep, r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !escapeRune(r, n, s[i]) || strings.ContainsRune(keep, r):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError || r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// escapeRune reports whether the rune r (n bytes, first byte b) is a control
// character a terminal may act on: C0, DEL, C1, or a byte that is not UTF-8
// (a terminal in an 8-bit mode reads 0x9b as CSI).
func escapeRune(r rune, n int, b byte) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return b >= 0x80
	case r < 0x20, r == 0x7f:
		return true
	}
	return r >= 0x80 && r <= 0x9f
}

// termWriter writes text for a terminal through termSafe, keeping newlines
// and tabs. Each Write is escaped on its own, so it is for writers fed
// whole strings (fmt, tabwriter), not byte streams split at any point.
type termWriter struct{ w io.Writer }

// Write escapes p's control characters and writes it; it reports len(p)
// written when the escaped text was written whole.
func (t termWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, termSafe(string(p), "\n\t")); err != nil {
		return 0, err
	}
	return len(p), nil
}
