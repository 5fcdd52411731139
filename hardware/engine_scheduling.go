package hardware

import "fmt"

// Scheduling is how an engine release forms batches relative to its forward
// passes (EngineProfile.Scheduling).
type Scheduling struct {
	// Async is true when the release forms a step's batch while the step
	// before it still runs on the GPU (vLLM's async scheduling: a batch
	// queue of two, the next batch scheduled as soon as the current one is
	// launched). A request that reaches a busy engine then joins the batch
	// after the next one, not the next one; an idle engine schedules it at
	// once.
	Async bool `yaml:"async" json:"async"`
	// AsyncSince is the first release that schedules asynchronously by
	// default ("0.14.0"). A profile also prices releases near its own
	// (EngineProfiles.For); those before AsyncSince schedule synchronously.
	// "" with Async: every release the profile stands for.
	AsyncSince string `yaml:"async_since,omitempty" json:"async_since,omitempty"`
	// Source cites where the engine sets the default (file or PR).
	Source string `yaml:"source" json:"source"`
}

// AsyncAt reports whether e's release rel schedules asynchronously by
// default, as e's scheduling section says (false without one).
func (e *EngineProfile) AsyncAt(rel [3]int) bool {
	s := e.Scheduling
	if s == nil || !s.Async {
		return false
	}
	if s.AsyncSince == "" {
		return true
	}
	_, since, _ := parseReleaseName(e.name + "-" + s.AsyncSince) // validate checked it
	return !releaseLess(rel, since)
}

// releaseLess reports whether release a is earlier than b.
func releaseLess(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// validate checks the section, naming the first bad key under
// "scheduling".
func (s *Scheduling) validate(engine string) *FieldError {
	if s.Source == "" {
		return fieldErr("scheduling.source", "required: cite the engine's source file or PR")
	}
	if s.AsyncSince != "" {
		if !s.Async {
			return fieldErr("scheduling.async_since", "set, but async is false")
		}
		if _, _, ok := parseReleaseName(engine + "-" + s.AsyncSince); !ok {
			return fieldErr("scheduling.async_since", fmt.Sprintf("%q is not a release of %s (as in %q)", s.AsyncSince, engine, releaseText(engine, [3]int{0, 14, 0})))
		}
	}
	return nil
}
