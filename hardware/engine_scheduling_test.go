package hardware

import (
	"errors"
	"testing"
)

const schedulingYAML = engineYAML + `scheduling:
  async: true
  async_since: 0.14.0
  source: vllm/config/scheduler.py
`

// The release a profile stands for decides its scheduling: on from
// async_since, off before it and without the section.
func TestEngineProfileAsyncAt(t *testing.T) {
	e, err := ParseEngineProfile([]byte(schedulingYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rel  [3]int
		want bool
	}{{[3]int{0, 12, 0}, false}, {[3]int{0, 13, 9}, false}, {[3]int{0, 14, 0}, true}, {[3]int{0, 15, 1}, true}, {[3]int{1, 0, 0}, true}} {
		if got := e.AsyncAt(tc.rel); got != tc.want {
			t.Errorf("AsyncAt(%v) = %v, want %v", tc.rel, got, tc.want)
		}
	}
	plain, err := ParseEngineProfile([]byte(engineYAML), "vllm-0.20.1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if plain.AsyncAt([3]int{0, 20, 1}) {
		t.Error("a profile without a scheduling section schedules asynchronously")
	}
}

func TestEngineProfileSchedulingErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, path string }{
		{"uncited", engineYAML + "scheduling:\n  async: true\n", "scheduling.source"},
		{"since without async", engineYAML + "scheduling:\n  async: false\n  async_since: 0.14.0\n  source: x\n", "scheduling.async_since"},
		{"since not a release", engineYAML + "scheduling:\n  async: true\n  async_since: soon\n  source: x\n", "scheduling.async_since"},
	} {
		_, err := ParseEngineProfile([]byte(tc.yaml), "vllm-0.20.1.yaml")
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("%s: %v, want a *FieldError at %s", tc.name, err, tc.path)
		}
	}
}
