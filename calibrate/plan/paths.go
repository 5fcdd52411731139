package plan

import (
	"path/filepath"
	"strings"
)

// Rewrite maps a step's words onto real directories: a path starting with
// DataPrefix (../shared/data/) moves under dataDir, one starting with
// ProfilesPrefix (hardware/profiles/) under outDir; words, flag=value
// values and the parts of comma-separated lists are mapped alike, other
// words are kept. When keep is not nil, a profile path whose file (below
// hardware/profiles/) keep rejects is dropped from its list: a step run for
// a subset of the plan's files (Select) writes only those. The recorded
// command (provenance) stays the step's own text; only where the files are
// read and written changes.
func Rewrite(args []string, dataDir, outDir string, keep func(file string) bool) []string {
	out := make([]string, len(args))
	for i, a := range args {
		flag, val, inline := strings.Cut(a, "=")
		if !inline || !strings.HasPrefix(flag, "-") {
			out[i] = rewriteList(a, dataDir, outDir, keep)
			continue
		}
		out[i] = flag + "=" + rewriteList(val, dataDir, outDir, keep)
	}
	return out
}

// rewriteList maps each comma-separated part of v (Rewrite).
func rewriteList(v, dataDir, outDir string, keep func(string) bool) string {
	var parts []string
	for _, p := range strings.Split(v, ",") {
		if rest, ok := strings.CutPrefix(p, DataPrefix); ok {
			p = filepath.Join(dataDir, rest)
		} else if rest, ok := strings.CutPrefix(p, ProfilesPrefix); ok {
			if keep != nil && !keep(rest) {
				continue
			}
			p = filepath.Join(outDir, rest)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ",")
}
