package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/hardware"
	"github.com/roofsim/roofsim/model"
	"github.com/roofsim/roofsim/workload"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMECatalogCounts: the README's "`sim gpus` lists N GPUs: A, B,
// ... and Z" names as many GPUs as it counts and as the catalog holds, and
// its "`sim models` lists N models" is the model catalog's size.
func TestREADMECatalogCounts(t *testing.T) {
	readme := strings.Join(strings.Fields(readREADME(t)), " ")
	m := regexp.MustCompile("`sim gpus` lists ([0-9]+) GPUs: ([^.]+)\\.").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("README: no \"`sim gpus` lists N GPUs: ...\" sentence (the test's pattern no longer matches)")
	}
	n, _ := strconv.Atoi(m[1])
	names := regexp.MustCompile(`, | and `).Split(m[2], -1)
	if got := len(hardware.List()); n != got || len(names) != got {
		t.Errorf("README: `sim gpus` lists %d GPUs and names %d (%q); the catalog has %d", n, len(names), names, got)
	}
	mm := regexp.MustCompile("`sim models` lists ([0-9]+) models").FindStringSubmatch(readme)
	if mm == nil {
		t.Fatal("README: no \"`sim models` lists N models\" sentence")
	}
	if n, _ := strconv.Atoi(mm[1]); n != len(model.List()) {
		t.Errorf("README: `sim models` lists %d models; the catalog has %d", n, len(model.List()))
	}
}

// TestREADMEFlagsExist: every `--flag` the README names is a flag of some
// command, cobra's --help, or a vllm bench serve flag --bench-args takes.
func TestREADMEFlagsExist(t *testing.T) {
	flags := map[string]bool{"help": true}
	for _, name := range workload.BenchArgNames() {
		flags[strings.TrimPrefix(name, "--")] = true
	}
	walkCommands(newRootCmd(streams{}), func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { flags[f.Name] = true })
	})
	for _, m := range regexp.MustCompile("`--([a-z0-9][a-z0-9-]*)").FindAllStringSubmatch(readREADME(t), -1) {
		if !flags[m[1]] {
			t.Errorf("README names --%s, which no command has", m[1])
		}
	}
}
