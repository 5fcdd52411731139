package plan

import (
	"path/filepath"
	"strings"
)

// Rewrite maps a step's words onto real directories: a path starting with
// DataPrefix (../shared/data/) moves under dataDir, a profile path
// (hardware/profiles/..., engine/profiles/...) under outDir, which stands
// for the repository root; words, flag=value values and the parts of
// comma-separated lists are mapped alike, other words are kept. The
// recorded command (provenance) stays the step's own text; only where the
// files are read and written changes.
func Rewrite(args []string, dataDir, outDir string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		flag, val, inline := strings.Cut(a, "=")
		if !inline || !strings.HasPrefix(flag, "-") {
			out[i] = rewriteList(a, dataDir, outDir)
			continue
		}
		out[i] = flag + "=" + rewriteList(val, dataDir, outDir)
	}
	return out
}

// rewriteList maps each comma-separated part of v (Rewrite).
func rewriteList(v, dataDir, outDir string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		if rest, ok := strings.CutPrefix(p, DataPrefix); ok {
			p = filepath.Join(dataDir, rest)
		} else if isProfilePath(p) {
			p = filepath.Join(outDir, filepath.FromSlash(p))
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}
