package datadriven

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const sample = `# A counter.
add n=2
----
2

# Comments stay.

add n=3 loud
----
5!

add
----
5

# trailing comment
`

func TestParse(t *testing.T) {
	f, err := Parse("s.txt", sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Commands) != 3 {
		t.Fatalf("%d commands, want 3", len(f.Commands))
	}
	c := f.Commands[1]
	if c.Pos != "s.txt:8" || c.Name != "add" || c.Expected != "5!" ||
		!slices.Equal(c.Args, []Arg{{"n", "3"}, {"loud", ""}}) {
		t.Errorf("command 1 = %+v", c)
	}
	if f.Commands[2].Expected != "5" || len(f.Commands[2].Args) != 0 {
		t.Errorf("command 2 = %+v", f.Commands[2])
	}
	// Format gives the file back, comments and blank lines included.
	if got := f.Format(nil); got != sample {
		t.Errorf("Format:\n%s", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"----\nx\n", "s.txt:1: ---- without a command"},
		{"add n=1\n", "s.txt:1: command without ----"},
		{"add n=1\nadd n=2\n----\n", "s.txt:1: command without ----"},
		{"add =1\n----\n", `s.txt:1: argument "=1": empty key`},
	} {
		if _, err := Parse("s.txt", tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestAccessors(t *testing.T) {
	f, err := Parse("s.txt", "cmd a=1 b=x c d=false\n----\n")
	if err != nil {
		t.Fatal(err)
	}
	c := f.Commands[0]
	if c.Int(t, "a", 0) != 1 || c.Str("b", "") != "x" || !c.Bool(t, "c", false) || c.Bool(t, "d", true) || c.Int(t, "zz", 7) != 7 {
		t.Error("accessors")
	}
	if u := c.Unused(); len(u) != 0 {
		t.Errorf("unused %v", u)
	}
	f, _ = Parse("s.txt", "cmd a=1 typo=2\n----\n")
	f.Commands[0].Int(t, "a", 0)
	if u := f.Commands[0].Unused(); !slices.Equal(u, []string{"typo"}) {
		t.Errorf("unused %v, want [typo]", u)
	}
}

// counter runs sample's commands: add n adds n (default 0) and prints the
// total, with "!" when loud.
func counter() func(t *testing.T, c *Command) string {
	total := 0
	return func(t *testing.T, c *Command) string {
		total += c.Int(t, "n", 0)
		s := strconv.Itoa(total)
		if c.Bool(t, "loud", false) {
			s += "!"
		}
		return s
	}
}

// TestRunAndUpdate: the sample passes as written; a file with wrong outputs
// is rewritten under update to the outputs that then pass, comments kept.
func TestRunAndUpdate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.txt")
	if err := os.WriteFile(good, []byte(sample), 0o644); err != nil {
		t.Fatal(err)
	}
	Run(t, good, false, counter())

	stale := filepath.Join(dir, "stale.txt")
	if err := os.WriteFile(stale, []byte(strings.ReplaceAll(sample, "5", "9")), 0o644); err != nil {
		t.Fatal(err)
	}
	Run(t, stale, true, counter())
	got, err := os.ReadFile(stale)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != sample {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, sample)
	}
	Run(t, stale, false, counter())
}
