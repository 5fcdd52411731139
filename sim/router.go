package sim

import (
	"fmt"

	"github.com/roofsim/roofsim/internal/registry"
	"github.com/roofsim/roofsim/routing"
	"github.com/roofsim/roofsim/workload"
)

// router picks the replica for each arriving request.
type router interface {
	pick(r *workload.Request, insts []*instance) int
}

var (
	_ router = (*roundRobin)(nil)
	_ router = leastOutstanding{}
	_ router = prefixAffinity{}
)

// routers lists the implementation of every router by its name
// (routing.Router); adding one is one entry here, plus its name in package
// routing (a test checks that the two lists agree). Each value makes a fresh router for one
// run, so stateful routers never share state.
func routers() registry.Table[func() router] {
	return registry.Table[func() router]{Entries: []registry.Entry[func() router]{
		{Name: string(routing.RoundRobin), Value: func() router { return &roundRobin{} }},
		{Name: string(routing.LeastOutstanding), Value: func() router { return leastOutstanding{} }},
		{Name: string(routing.PrefixAffinity), Value: func() router { return prefixAffinity{} }},
	}}
}

// newRouter returns the router called name ("" means round-robin), or a
// *routing.UnknownError.
func newRouter(name routing.Router) (router, error) {
	if err := name.Validate(); err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	if name == "" {
		name = routing.RoundRobin
	}
	newRouter, err := routers().Lookup(string(name))
	if err != nil {
		panic(fmt.Sprintf("router %q has no implementation: %v", name, err)) // routing names it, sim must run it
	}
	return newRouter(), nil
}

// roundRobin cycles through replicas in order.
type roundRobin struct{ next int }

func (rr *roundRobin) pick(_ *workload.Request, insts []*instance) int {
	i := rr.next % len(insts)
	rr.next = i + 1
	return i
}

// leastOutstanding picks the replica with the fewest unfinished requests
// (lowest index on ties).
type leastOutstanding struct{}

func (leastOutstanding) pick(_ *workload.Request, insts []*instance) int {
	best := 0
	for i, in := range insts {
		if in.outstanding < insts[best].outstanding {
			best = i
		}
	}
	return best
}

// prefixAffinity sends requests that share their last content segment (the
// session for multi-turn chats, otherwise the shared system prompt) to the
// same replica, so its prefix cache hits; requests without segments go to
// the least-loaded replica.
type prefixAffinity struct{}

func (prefixAffinity) pick(r *workload.Request, insts []*instance) int {
	if len(r.Segments) == 0 {
		return leastOutstanding{}.pick(r, insts)
	}
	k := r.Segments[len(r.Segments)-1].Key
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return int(k % uint64(len(insts)))
}
