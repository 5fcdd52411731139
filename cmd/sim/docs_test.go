package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walkCommands calls f for every command of the CLI.
func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}

// TestREADMEFlagDefaults checks every "`--flag` ..., default N" the README
// states against the flag's default in the CLI.
func TestREADMEFlagDefaults(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("`--([a-z0-9-]+)`[^`;)]{0,40}?,? default ([0-9.]+)")
	flags := map[string][]string{}
	walkCommands(newRootCmd(streams{}), func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = append(flags[f.Name], f.DefValue) })
	})
	n := 0
	for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
		n++
		defs, ok := flags[m[1]]
		if !ok {
			t.Errorf("README names --%s, which no command has", m[1])
			continue
		}
		found := false
		for _, d := range defs {
			found = found || d == m[2]
		}
		if !found {
			t.Errorf("README: --%s default %s; the CLI's: %v", m[1], m[2], defs)
		}
	}
	if n == 0 {
		t.Fatal("no flag default found in the README: the pattern no longer matches its wording")
	}
}

// TestHelpHasNoGoIdentifiers: help text speaks of settings and values, not
// of the Go constants behind them.
func TestHelpHasNoGoIdentifiers(t *testing.T) {
	goIdent := regexp.MustCompile(`\b(calibrate|serving|workload|roofline|sim|traces|hardware|sweep|model|steps|kernels)\.[A-Z][A-Za-z0-9]+`)
	walkCommands(newRootCmd(streams{}), func(c *cobra.Command) {
		text := c.Long + "\n" + c.Short + "\n" + c.Example
		c.Flags().VisitAll(func(f *pflag.Flag) { text += " " + f.Usage + " " + f.DefValue })
		if m := goIdent.FindString(text); m != "" {
			t.Errorf("%s: help names the Go identifier %s", c.CommandPath(), m)
		}
	})
}

func TestVersion(t *testing.T) {
	code, out, errOut := cli(t, "version", "--json")
	if code != 0 {
		t.Fatal(errOut)
	}
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatal(err)
	}
	if b.Version != version || b.GoVersion != runtime.Version() || b.Commit == "" {
		t.Errorf("version %+v", b)
	}
	if code, out, _ := cli(t, "version"); code != 0 || !strings.Contains(out, "roofsim "+version) || !strings.Contains(out, runtime.Version()) {
		t.Errorf("sim version: %d %q", code, out)
	}
}

// TestSweepExitCodesAsDocumented runs the cases docs/sweep.md lists under
// "Checked before any simulation" and checks their exit codes.
func TestSweepExitCodesAsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "- exit code 2 (the command line is wrong)") || !strings.Contains(string(doc), "- exit code 1 (the command line is well formed") {
		t.Fatal("docs/sweep.md no longer lists the exit codes this test checks")
	}
	base := []string{"sweep", "--workload", "../../examples/chat.yaml", "--gpus", "h100", "--tp", "1", "--slo", "ttft_p99=500ms", "--requests", "10", "--probes", "1", "--quiet"}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--gpus", "h900"}, 2},
		{[]string{"--tp", "3"}, 2},
		{[]string{"--slo", "bad"}, 2},
		{[]string{"--model", "no-such-model"}, 1},
		{[]string{"--out", filepath.Join(t.TempDir(), "missing", "x.parquet")}, 1},
	} {
		code, _, errOut := cli(t, append(append([]string{}, base...), c.args...)...)
		if code != c.code {
			t.Errorf("%v: exit %d, docs/sweep.md says %d (%s)", c.args, code, c.code, errOut)
		}
	}
}

// The roofline chart names the bandwidth once ("DRAM 273 GB/s", not
// "DRAM 273 GB/s 273 GB/s").
func TestRooflinePlotBandwidthLabelOnce(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.svg")
	if code, _, errOut := cli(t, "roofline", "plot", "--gpu", "gb10", "--out", out); code != 0 {
		t.Fatal(errOut)
	}
	svg, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), "273 GB/s"); n != 1 {
		t.Errorf("the bandwidth appears %d times in the chart", n)
	}
}
