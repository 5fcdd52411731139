package engine

import "strings"

// FromProfile reads the engine release a GPU profile's label names
// (hardware.Profile.Engine): the first word in the setting's form
// ("vllm@0.14.0 kernels"), or in the calibration code's own,
// "vllm-0.14.0 kernels" (name-version) and "llama.cpp b6989-b7941 (CUDA)"
// (name, then a build or a range of builds, whose first is taken). ok is
// false when the label names no known engine release ("generic", "").
func FromProfile(label string) (e Engine, ok bool) {
	f := strings.Fields(label)
	if len(f) == 0 {
		return Engine{}, false
	}
	if e, err := Parse(f[0]); err == nil {
		return e, !e.IsZero()
	}
	try := func(name, ver string) (Engine, bool) {
		ver, _, _ = strings.Cut(ver, "-b") // a range of builds: its first
		e, err := Parse(name + "@" + ver)
		return e, err == nil
	}
	for _, n := range Names() {
		if ver, ok := strings.CutPrefix(strings.ToLower(f[0]), string(n)+"-"); ok {
			return try(string(n), ver)
		}
		if strings.EqualFold(f[0], string(n)) && len(f) > 1 {
			return try(string(n), f[1])
		}
	}
	return Engine{}, false
}
