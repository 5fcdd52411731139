package hardware

import (
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ReleaseProfile is a GPU's kernel profile for one serving-engine release:
// the file profiles/<gpu>/<engine>-<release>.yaml (e.g.
// profiles/b200/vllm-0.24.0.yaml), fitted to the kernel tables that release
// ran (sim calibrate --aic ... --engine vllm@0.24.0).
type ReleaseProfile struct {
	// Engine is the engine's name as the file names it ("vllm").
	Engine string
	// Release is the engine release major.minor.patch.
	Release [3]int
	// File is the embedded file's path, for messages.
	File    string
	Profile *Profile
}

// ReleaseString is "0.24.0".
func (r ReleaseProfile) ReleaseString() string {
	return fmt.Sprintf("%d.%d.%d", r.Release[0], r.Release[1], r.Release[2])
}

// ReleaseFileError is a per-release profile file whose name is not
// <engine>-<major.minor.patch>.yaml.
type ReleaseFileError struct{ File string }

func (e *ReleaseFileError) Error() string {
	return fmt.Sprintf("%s: a per-release profile is named <engine>-<major.minor.patch>.yaml, as in vllm-0.24.0.yaml", e.File)
}

// parseReleaseName splits "vllm-0.24.0" into its engine and release;
// "llama.cpp-b6989" (a build-numbered engine) is {6989, 0, 0}.
func parseReleaseName(base string) (string, [3]int, bool) {
	i := strings.LastIndex(base, "-")
	if i <= 0 {
		return "", [3]int{}, false
	}
	if b, ok := strings.CutPrefix(base[i+1:], "b"); ok && buildNumbered(base[:i]) {
		n, err := strconv.Atoi(b)
		if err != nil || n < 0 || strconv.Itoa(n) != b {
			return "", [3]int{}, false
		}
		return base[:i], [3]int{n}, true
	}
	parts := strings.Split(base[i+1:], ".")
	if len(parts) != 3 {
		return "", [3]int{}, false
	}
	var r [3]int
	for j, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strconv.Itoa(n) != p {
			return "", [3]int{}, false
		}
		r[j] = n
	}
	return base[:i], r, true
}

// compareRelease orders two releases (-1, 0, +1).
func compareRelease(a, b [3]int) int { return slices.Compare(a[:], b[:]) }

// readReleaseProfiles reads the profiles/<gpu>/ directory of g (if any)
// into g.Releases, oldest first within an engine.
func readReleaseProfiles(g *GPU, profiles fs.FS, dir string, engines EngineProfiles) error {
	sub := path.Join(dir, g.Name)
	entries, err := fs.ReadDir(profiles, sub)
	if err != nil {
		return nil // no directory: no per-release profiles
	}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		file := path.Join(sub, e.Name())
		eng, rel, ok := parseReleaseName(strings.TrimSuffix(e.Name(), ext))
		if !ok {
			return &ReleaseFileError{File: file}
		}
		rp := ReleaseProfile{Engine: eng, Release: rel, File: file}
		if rp.Profile, err = readProfileFile(profiles, file, engines, &rp, g.Arch); err != nil {
			return err
		}
		g.Releases = append(g.Releases, rp)
	}
	slices.SortFunc(g.Releases, func(a, b ReleaseProfile) int {
		if c := strings.Compare(a.Engine, b.Engine); c != 0 {
			return c
		}
		return compareRelease(a.Release, b.Release)
	})
	return nil
}

// ReleaseChoice is the profile a GPU takes for an engine release, and how
// it was reached.
type ReleaseChoice struct {
	Profile *Profile
	// Release is the release whose profile was taken (zero when none).
	Release [3]int
	// Donor is the GPU the profile was borrowed from ("" for the GPU's own).
	Donor string
	// Note says what was not exact, in one line ("" when the release's own
	// profile was found).
	Note string
}

// releaseFor picks, among g's own profiles for engine (its per-release
// files and, when its label names that engine, its single-file profile),
// the newest at or before rel, else the oldest; ok is false when g has
// none for engine. releaseOf gives the single-file profile's engine and
// release.
func (g *GPU) releaseFor(engine string, rel [3]int, releaseOf func(*Profile) (string, [3]int, bool)) (ReleaseChoice, bool) {
	type cand struct {
		r [3]int
		p *Profile
	}
	var cs []cand
	for _, r := range g.Releases {
		if r.Engine == engine {
			cs = append(cs, cand{r.Release, r.Profile})
		}
	}
	if g.Profile != nil && g.Profile.BorrowedFrom == "" && releaseOf != nil {
		if e, r, ok := releaseOf(g.Profile); ok && e == engine && !slices.ContainsFunc(cs, func(c cand) bool { return c.r == r }) {
			cs = append(cs, cand{r, g.Profile})
		}
	}
	if len(cs) == 0 {
		return ReleaseChoice{}, false
	}
	slices.SortFunc(cs, func(a, b cand) int { return compareRelease(a.r, b.r) })
	pick := cs[0]
	for _, c := range cs {
		if compareRelease(c.r, rel) <= 0 {
			pick = c
		}
	}
	ch := ReleaseChoice{Profile: pick.p, Release: pick.r}
	switch c := compareRelease(pick.r, rel); {
	case c < 0:
		ch.Note = fmt.Sprintf("%s has no %s %s kernel profile; using the nearest earlier release, %s", g.Name, engine, fmtRelease(rel), fmtRelease(pick.r))
	case c > 0:
		ch.Note = fmt.Sprintf("%s has no %s kernel profile at or before %s; using the earliest, %s", g.Name, engine, fmtRelease(rel), fmtRelease(pick.r))
	}
	return ch, true
}

func fmtRelease(r [3]int) string { return fmt.Sprintf("%d.%d.%d", r[0], r[1], r[2]) }

// ForRelease returns the profile g takes under engine at release rel: its
// own profile for that engine (the newest at or before rel, with a note when
// not rel itself), else one borrowed from the nearest GPU of its
// architecture family that has one (Donor), else the built-in defaults
// (with a note). releaseOf reads a single-file profile's engine and release
// from its label (engine.FromProfile); gpus is the catalog to borrow from.
func (g *GPU) ForRelease(engine string, rel [3]int, gpus []GPU, releaseOf func(*Profile) (string, [3]int, bool)) ReleaseChoice {
	if ch, ok := g.releaseFor(engine, rel, releaseOf); ok {
		return ch
	}
	has := func(d *GPU) bool { _, ok := d.releaseFor(engine, rel, releaseOf); return ok }
	if d := Donor(g, gpus, has); d != nil {
		ch, _ := d.releaseFor(engine, rel, releaseOf)
		note := fmt.Sprintf("%s has no %s kernel profile; borrowing %s's (%s %s, same architecture family %s/%s), scaled by %s's own peaks and bandwidth",
			g.Name, engine, d.Name, engine, fmtRelease(ch.Release), g.Arch, d.Arch, g.Name)
		if ch.Note != "" {
			note += "; " + ch.Note
		}
		return ReleaseChoice{Profile: ch.Profile.BorrowedBy(d.Name), Release: ch.Release, Donor: d.Name, Note: note}
	}
	return ReleaseChoice{Profile: DefaultProfile(), Note: fmt.Sprintf("%s has no %s kernel profile and no calibrated GPU of its architecture family (%s) has one; using the built-in defaults", g.Name, engine, g.Arch)}
}

// Donor is the GPU g borrows a kernel profile from: among the GPUs of gpus
// other than g that ok accepts (by default: those with their own calibrated
// profile), those of g's exact architecture if any, else of its
// architecture family (the same CUDA major version: sm120 and sm121, sm100
// and sm103); of these the nearest in specs (memory bandwidth and dense
// BF16 peak, on a log scale), ties by name. nil when there is none.
func Donor(g *GPU, gpus []GPU, ok func(*GPU) bool) *GPU {
	if ok == nil {
		ok = func(d *GPU) bool { return d.Profile != nil && d.Profile.Calibrated && d.Profile.BorrowedFrom == "" }
	}
	if g.Arch == "" {
		return nil
	}
	var exact, family []*GPU
	for i := range gpus {
		d := &gpus[i]
		if d.Name == g.Name || d.Arch == "" || !ok(d) {
			continue
		}
		switch {
		case d.Arch == g.Arch:
			exact = append(exact, d)
		case d.Arch.Major() == g.Arch.Major():
			family = append(family, d)
		}
	}
	pool := exact
	if len(pool) == 0 {
		pool = family
	}
	var best *GPU
	bestD := math.Inf(1)
	for _, d := range pool {
		dist := specDistance(g, d)
		if dist < bestD || (dist == bestD && best != nil && d.Name < best.Name) {
			best, bestD = d, dist
		}
	}
	return best
}

// specDistance is |log(bandwidth ratio)| + |log(BF16 peak ratio)| of two
// GPUs (a missing peak counts as no difference).
func specDistance(a, b *GPU) float64 {
	d := math.Abs(math.Log(a.MemoryBandwidthGBps / b.MemoryBandwidthGBps))
	pa, oka := a.PeakFLOPS("bf16")
	pb, okb := b.PeakFLOPS("bf16")
	if oka && okb {
		d += math.Abs(math.Log(pa / pb))
	}
	return d
}

// BorrowedBy returns a copy of p for a GPU that borrows it from donor:
// every efficiency (a fraction of the borrowing GPU's own peaks and
// bandwidth) and engine term carries over; the all-reduce fit does not (it
// is in absolute latency and bus bandwidth of the donor's interconnect), so
// the borrower's all-reduce takes the default derived from its own
// interconnect. Status reports borrowed:<donor>.
func (p *Profile) BorrowedBy(donor string) *Profile {
	c := p.Clone()
	c.BorrowedFrom = donor
	c.AllReduce = DefaultProfile().AllReduce
	return c
}

// applyBorrowed gives every GPU without a profile of its own (none inline,
// no file, no per-release file) the profile of its Donor, borrowed.
// Donors are chosen among GPUs with their own calibrated profile only, so
// the order of gpus does not matter.
func applyBorrowed(gpus []GPU) {
	var borrowed []struct {
		i int
		p *Profile
	}
	for i := range gpus {
		if gpus[i].Profile != nil {
			continue
		}
		if d := Donor(&gpus[i], gpus, nil); d != nil {
			borrowed = append(borrowed, struct {
				i int
				p *Profile
			}{i, d.Profile.BorrowedBy(d.Name)})
		}
	}
	for _, b := range borrowed {
		gpus[b.i].Profile = b.p
	}
}

// newestRelease is the last release of the engine with the newest release
// among rs (rs sorted by engine, then release).
func newestRelease(rs []ReleaseProfile) ReleaseProfile {
	best := rs[0]
	for _, r := range rs[1:] {
		if compareRelease(r.Release, best.Release) > 0 {
			best = r
		}
	}
	return best
}
