package workload

// ClientNames returns the names that Request.Client indexes: the spec's
// clients in order, or a replayed trace's client column values in order of
// first appearance ("trace" when the trace has no client column).
func (g *Generator) ClientNames() []string {
	if g.trace != nil {
		if len(g.trace.Clients) == 0 {
			return []string{"trace"}
		}
		return append([]string(nil), g.trace.Clients...)
	}
	names := make([]string, len(g.clients))
	for i := range g.clients {
		names[i] = g.clients[i].spec.Name
	}
	return names
}

// HasFollowUps reports whether OnComplete can ever return a request (or
// change the generator's state): true when any client is closed-loop, runs
// multi-turn sessions or caps its requests in flight (arrival.max_concurrency);
// false for other open-loop clients only and for trace replay. The engine uses
// it to fast-forward through completions.
func (g *Generator) HasFollowUps() bool {
	if g.trace != nil {
		return false
	}
	for i := range g.clients {
		c := g.clients[i].spec
		if c.Arrival == nil || c.Session != nil || c.Arrival.MaxConcurrency > 0 {
			return true
		}
	}
	return false
}
