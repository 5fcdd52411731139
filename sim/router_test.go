package sim

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/workload"
)

// The router table has unique names, each builds a router and is documented
// in docs/workload.md, "" means round-robin, and an unknown name is an error
// naming the known routers. Properties, not the list: a new router is one
// table entry and its doc.
func TestRouterRegistry(t *testing.T) {
	if err := routers().Check(); err != nil {
		t.Fatal(err)
	}
	if names := routing.Names(); !slices.Equal(routers().Names(), names) {
		t.Fatalf("sim runs routers %v, routing names %v: each named router needs one implementation", routers().Names(), names)
	}
	doc, err := os.ReadFile("../docs/workload.md")
	if err != nil {
		t.Fatal(err)
	}
	var routerDoc string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| `router` |") {
			routerDoc = line
		}
	}
	for _, name := range routing.Names() {
		if !strings.Contains(routerDoc, name) {
			t.Errorf("router %q is not documented in docs/workload.md (%q)", name, routerDoc)
		}
	}
	for _, name := range append(routing.Routers(), "") {
		if r, err := newRouter(name); err != nil || r == nil {
			t.Fatalf("newRouter(%q) = %v, %v", name, r, err)
		}
	}
	if _, ok := mustRouter(t, "").(*roundRobin); !ok {
		t.Fatal(`router "" is not round-robin`)
	}
	c := Config{Scheduler: schedCfg(100), StepModel: linearStep{base: 1}, Replicas: 2, Router: "random"}
	err = c.Validate()
	if want := `router: unknown "random" (want ` + routers().Want() + `)`; err == nil || err.Error() != want {
		t.Fatalf("Validate with router random: %v, want %s", err, want)
	}
	if ue := (*routing.UnknownError)(nil); !errors.As(err, &ue) || ue.Name != "random" {
		t.Fatalf("Validate with router random: %v is not a *routing.UnknownError naming it", err)
	}
	if _, err := Run(c, nil, nil); err == nil {
		t.Fatal("Run accepted an unknown router")
	}
}

func mustRouter(t *testing.T, name routing.Router) router {
	t.Helper()
	r, err := newRouter(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each router's choice, by hand: round-robin cycles, least-outstanding takes the
// lowest count (lowest index on ties), prefix-affinity keeps one replica per last
// segment key and falls back to least-outstanding without segments.
func TestRouterChoices(t *testing.T) {
	insts := []*instance{{id: 0, outstanding: 3}, {id: 1, outstanding: 1}, {id: 2, outstanding: 1}}
	rr := mustRouter(t, routing.RoundRobin)
	var got []int
	for range 5 {
		got = append(got, rr.pick(&workload.Request{}, insts))
	}
	if !slices.Equal(got, []int{0, 1, 2, 0, 1}) {
		t.Fatalf("round-robin picked %v", got)
	}
	if got := mustRouter(t, routing.LeastOutstanding).pick(&workload.Request{}, insts); got != 1 {
		t.Fatalf("least-outstanding picked %d, want 1", got)
	}
	pa := mustRouter(t, routing.PrefixAffinity)
	if got := pa.pick(&workload.Request{}, insts); got != 1 {
		t.Fatalf("prefix-affinity without segments picked %d, want 1", got)
	}
	seen := map[uint64]int{}
	spread := map[int]bool{}
	for key := range uint64(64) {
		for _, other := range []uint64{7, 9} {
			r := &workload.Request{Segments: []workload.Segment{{Key: other, Tokens: 5}, {Key: key, Tokens: 10}}}
			p := pa.pick(r, insts)
			if prev, ok := seen[key]; ok && prev != p {
				t.Fatalf("key %d went to replicas %d and %d", key, prev, p)
			}
			seen[key] = p
			spread[p] = true
		}
	}
	if len(spread) != len(insts) {
		t.Fatalf("64 keys used replicas %v, want all %d", spread, len(insts))
	}
}
