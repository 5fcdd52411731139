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
