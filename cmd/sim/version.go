package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// commit is the source revision; set at link time with
// -X main.commit=<sha> (the Dockerfile does), else read from the Go
// toolchain's build information (vcs.revision, present when built inside a
// git checkout).
var commit = ""

// buildInfo is what `sim version` reports.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if b.Version == "" && info.Main.Version != "" {
			b.Version = info.Main.Version
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func newVersionCmd(s streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, source commit and Go version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			b := currentBuild()
			if asJSON {
				return writeJSON(s.out, b)
			}
			mod := ""
			if b.Modified {
				mod = " (modified)"
			}
			_, err := fmt.Fprintf(s.out, "roofsim %s\ncommit  %s%s\ngo      %s %s\n", b.Version, b.Commit, mod, b.GoVersion, b.Platform)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as one JSON object")
	return cmd
}
