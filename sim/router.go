package sim

import (
	"fmt"

	"github.com/roofsim/roofsim/internal/registry"
	"github.com/roofsim/roofsim/workload"
)

// Router names accepted by Config.Router.
const (
	RouterRoundRobin       = "round-robin"
	RouterLeastOutstanding = "least-outstanding"
	RouterPrefixAffinity   = "prefix-affinity"
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

// routers lists every router by its Config.Router name; adding one is one entry
// here (plus its Router* constant and type). Each value makes a fresh router for one
// run, so stateful routers never share state.
func routers() registry.Table[func() router] {
	return registry.Table[func() router]{Entries: []registry.Entry[func() router]{
		{Name: RouterRoundRobin, Value: func() router { return &roundRobin{} }},
		{Name: RouterLeastOutstanding, Value: func() router { return leastOutstanding{} }},
		{Name: RouterPrefixAffinity, Value: func() router { return prefixAffinity{} }},
	}}
}

// RouterNames lists the accepted Config.Router values ("" also means
// round-robin).
func RouterNames() []string { return routers().Names() }

// newRouter returns the router called name ("" means round-robin).
func newRouter(name string) (router, error) {
	if name == "" {
		name = RouterRoundRobin
	}
	newRouter, err := routers().Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
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
