// Package datadriven runs scenario tests written as data, in the style of
// etcd-io/raft's interaction tests: a file under testdata/ holds commands,
// each followed by the output it must print. A test gives a handler that
// runs one command against its state and returns the output; the driver
// compares it with the file, or rewrites the file's outputs (the -update
// flag of the calling test package, passed in as a bool).
//
// File format, one block per command:
//
//	# Comments and blank lines before a command are kept on rewrite.
//	step n=2 verbose
//	----
//	output lines (no blank line inside; an empty output is no line)
//
// A command line is a name, then arguments: key=value, or a bare key (a
// flag, value ""). Values hold no spaces. The output ends at the first
// blank line or the end of the file. Reading order: Parse, Command's
// accessors, Run.
package datadriven

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Arg is one argument of a command line: Key=Val, or a bare Key (Val "").
type Arg struct {
	Key, Val string
}

// Command is one block of a scenario file.
type Command struct {
	// Pos is "file:line" of the command line, for messages.
	Pos string
	// Name is the command's first word.
	Name string
	// Args are the rest of the line, in order.
	Args []Arg
	// Expected is the output the file gives, without a trailing newline.
	Expected string

	// header is the block's text before "----": comments, blank lines and
	// the command line, kept verbatim for rewriting.
	header string
	// used marks the arguments an accessor has read.
	used []bool
}

// File is a parsed scenario file.
type File struct {
	Commands []*Command
	// trailer is the text after the last block (comments, blank lines).
	trailer string
}

// Parse reads a scenario file's content; name is used in positions and
// errors. An error names the line: a command line without its "----", a
// "----" without a command, or a malformed argument.
func Parse(name string, data string) (*File, error) {
	f := &File{}
	lines := strings.Split(data, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var header []string
	var cur *Command
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case trim == "----":
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: ---- without a command before it", name, i+1)
			}
			cur.header = strings.Join(header, "\n")
			var out []string
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
				i++
				out = append(out, lines[i])
			}
			cur.Expected = strings.Join(out, "\n")
			f.Commands = append(f.Commands, cur)
			header, cur = nil, nil
		case trim == "" || strings.HasPrefix(trim, "#"):
			if cur != nil {
				return nil, fmt.Errorf("%s: command without ---- and its output", cur.Pos)
			}
			header = append(header, line)
		default:
			if cur != nil {
				return nil, fmt.Errorf("%s: command without ---- and its output", cur.Pos)
			}
			c, err := parseCommand(fmt.Sprintf("%s:%d", name, i+1), trim)
			if err != nil {
				return nil, err
			}
			cur = c
			header = append(header, line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: command without ---- and its output", cur.Pos)
	}
	f.trailer = strings.Join(header, "\n")
	return f, nil
}

// parseCommand splits one command line.
func parseCommand(pos, line string) (*Command, error) {
	fields := strings.Fields(line)
	c := &Command{Pos: pos, Name: fields[0]}
	for _, tok := range fields[1:] {
		k, v, _ := strings.Cut(tok, "=")
		if k == "" {
			return nil, fmt.Errorf("%s: argument %q: empty key", pos, tok)
		}
		c.Args = append(c.Args, Arg{Key: k, Val: v})
	}
	c.used = make([]bool, len(c.Args))
	return c, nil
}

// Format writes f back with outputs[i] as command i's output (the file's
// own expected outputs when outputs is nil). Parse(Format(f)) gives f again.
func (f *File) Format(outputs []string) string {
	var b strings.Builder
	for i, c := range f.Commands {
		out := c.Expected
		if outputs != nil {
			out = outputs[i]
		}
		if i > 0 && !strings.HasPrefix(c.header, "\n") {
			b.WriteString("\n") // the blank line that ends the previous output
		}
		b.WriteString(c.header)
		b.WriteString("\n----\n")
		if out != "" {
			b.WriteString(out)
			b.WriteString("\n")
		}
	}
	if f.trailer != "" {
		if len(f.Commands) > 0 && !strings.HasPrefix(f.trailer, "\n") {
			b.WriteString("\n")
		}
		b.WriteString(f.trailer)
		b.WriteString("\n")
	}
	return b.String()
}

// lookup returns the value of key and marks it read.
func (c *Command) lookup(key string) (string, bool) {
	for i, a := range c.Args {
		if a.Key == key {
			c.used[i] = true
			return a.Val, true
		}
	}
	return "", false
}

// Has reports whether the command has argument key (a flag or key=value).
func (c *Command) Has(key string) bool {
	_, ok := c.lookup(key)
	return ok
}

// Str returns argument key's value, or def when it is absent.
func (c *Command) Str(key, def string) string {
	if v, ok := c.lookup(key); ok {
		return v
	}
	return def
}

// Int returns argument key as an integer, or def when it is absent. A
// value that is not an integer fails the test, naming the position.
func (c *Command) Int(tb testing.TB, key string, def int) int {
	tb.Helper()
	v, ok := c.lookup(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		tb.Fatalf("%s: %s=%q: want an integer", c.Pos, key, v)
	}
	return n
}

// Bool returns argument key as a boolean (a bare key is true), or def when
// it is absent. Anything else than true/false fails the test.
func (c *Command) Bool(tb testing.TB, key string, def bool) bool {
	tb.Helper()
	v, ok := c.lookup(key)
	if !ok {
		return def
	}
	if v == "" {
		return true
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		tb.Fatalf("%s: %s=%q: want true or false", c.Pos, key, v)
	}
	return b
}

// Unused lists the arguments no accessor has read: a misspelt key.
func (c *Command) Unused() []string {
	var out []string
	for i, a := range c.Args {
		if !c.used[i] {
			out = append(out, a.Key)
		}
	}
	return out
}

// Run runs the scenario file at path: handler runs each command in order
// (state lives in the handler's closure) and returns its output. An output
// that differs from the file's is an error naming the command's position;
// with update the file is rewritten with the new outputs instead. An
// argument the handler did not read fails the test. Outputs are trimmed of
// trailing newlines and must contain no blank line.
func Run(t *testing.T, path string, update bool, handler func(t *testing.T, c *Command) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(path, string(data))
	if err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, len(f.Commands))
	for i, c := range f.Commands {
		out := strings.TrimRight(handler(t, c), "\n")
		if u := c.Unused(); len(u) > 0 {
			t.Fatalf("%s: %s: unknown arguments %v", c.Pos, c.Name, u)
		}
		for _, line := range strings.Split(out, "\n") {
			if out != "" && strings.TrimSpace(line) == "" {
				t.Fatalf("%s: %s: the output has a blank line, which would end it in the file:\n%s", c.Pos, c.Name, out)
			}
		}
		outputs[i] = out
		if !update && out != c.Expected {
			t.Errorf("%s: %s: output differs (rerun with -update if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", c.Pos, c.Name, out, c.Expected)
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(f.Format(outputs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// RunDir runs every dir/*.txt file as a subtest named for the file, each
// with a fresh handler from newHandler (a scenario's state starts empty).
// A directory without scenario files fails the test.
func RunDir(t *testing.T, dir string, update bool, newHandler func() func(t *testing.T, c *Command) string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files in %s: %v", dir, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			Run(t, path, update, newHandler())
		})
	}
}
