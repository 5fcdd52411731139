package scheduler

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// The policy table has unique names, each builds its queue and is documented
// in docs/workload.md, "" means fcfs, and an unknown name is an error listing
// the known ones, from Validate and from New. Properties, not the list: a new
// policy is one table entry and its doc.
func TestPolicyRegistry(t *testing.T) {
	if err := policies().Check(); err != nil {
		t.Fatal(err)
	}
	names := PolicyNames()
	if len(names) == 0 || !slices.Contains(names, string(PolicyFCFS)) {
		t.Fatalf("PolicyNames() = %v: empty or without the default %q", names, PolicyFCFS)
	}
	doc := docLine(t, "`serving.scheduling_policy`")
	for _, name := range names {
		if !strings.Contains(doc, `"`+name+`"`) {
			t.Errorf("policy %q is not documented in docs/workload.md: %s", name, doc)
		}
	}
	for _, name := range append(PolicyNames(), "") {
		if err := CheckPolicy(name); err != nil {
			t.Fatalf("CheckPolicy(%q): %v", name, err)
		}
		c := testConfig()
		c.Policy = Policy(name)
		s, err := New(c)
		if err != nil {
			t.Fatalf("New with policy %q: %v", name, err)
		}
		if name == "" && s.Config().Policy != PolicyFCFS {
			t.Fatalf(`policy "" resolved to %q, want fcfs`, s.Config().Policy)
		}
	}
	err := CheckPolicy("lifo")
	if err == nil || err.Error() != `unknown "lifo" (want `+policies().Want()+`)` {
		t.Fatalf("CheckPolicy(lifo) = %v", err)
	}
	var ue *UnknownPolicyError
	if !errors.As(err, &ue) || ue.Name != "lifo" || !slices.Equal(ue.Known, names) {
		t.Fatalf("CheckPolicy(lifo) = %v, want an *UnknownPolicyError listing %v", err, names)
	}
	for _, name := range names {
		p, err := ParsePolicy(name)
		var back Policy
		if b, _ := p.MarshalText(); err != nil || string(p) != name || back.UnmarshalText(b) != nil || back != p {
			t.Errorf("ParsePolicy(%q) = %q, %v; read back %q", name, p, err, back)
		}
	}
	if p := PolicySJF; !errors.As(p.UnmarshalText([]byte("lifo")), &ue) || p != PolicySJF {
		t.Errorf("UnmarshalText(lifo) accepted it or changed the policy to %q", p)
	}
	c := testConfig()
	c.Policy = "lifo"
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), `unknown "lifo"`) {
		t.Fatalf("New with policy lifo: %v", err)
	}
}

// drain pops every request and returns their IDs in admission order.
func drain(q waitQueue) []uint64 {
	var out []uint64
	for q.Len() > 0 {
		if q.Peek() == nil {
			return nil
		}
		out = append(out, q.Pop().ID)
	}
	return out
}

// Each queue admits in its policy's order; PushFront puts a preempted request first
// in FIFO order and by its key in the ordered queues; each visits every request.
func TestWaitQueueOrders(t *testing.T) {
	reqs := []*Request{
		{ID: 1, Seq: 1, Priority: 2, PromptTokens: 50},
		{ID: 2, Seq: 2, Priority: 0, PromptTokens: 70},
		{ID: 3, Seq: 3, Priority: 1, PromptTokens: 10},
		{ID: 4, Seq: 4, Priority: 0, PromptTokens: 10},
		{ID: 5, Seq: 0, Priority: 2, PromptTokens: 90}, // preempted: an early arrival
	}
	for _, tc := range []struct {
		policy Policy
		want   []uint64
	}{
		{PolicyFCFS, []uint64{5, 1, 2, 3, 4}},
		{PolicyPriority, []uint64{2, 4, 3, 5, 1}},
		{PolicySJF, []uint64{3, 4, 1, 2, 5}},
	} {
		q, err := newWaitQueue(tc.policy)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs[:4] {
			q.Push(r)
		}
		q.PushFront(reqs[4])
		var seen []uint64
		q.each(func(r *Request) { seen = append(seen, r.ID) })
		slices.Sort(seen)
		if !slices.Equal(seen, []uint64{1, 2, 3, 4, 5}) {
			t.Fatalf("%s: each visited %v", tc.policy, seen)
		}
		if got := drain(q); !slices.Equal(got, tc.want) {
			t.Fatalf("%s: admission order %v, want %v", tc.policy, got, tc.want)
		}
	}
}

// The FIFO ring keeps its order across growth and wrap-around.
func TestFIFOWrapsAndGrows(t *testing.T) {
	q := &fifoQueue{}
	var want []uint64
	id := uint64(0)
	push := func(n int) {
		for range n {
			id++
			q.Push(&Request{ID: id})
			want = append(want, id)
		}
	}
	push(6)
	for range 4 { // move head forward so later pushes wrap
		if got := q.Pop().ID; got != want[0] {
			t.Fatalf("popped %d, want %d", got, want[0])
		}
		want = want[1:]
	}
	push(20) // wraps, then grows twice
	id++
	q.PushFront(&Request{ID: id})
	want = append([]uint64{id}, want...)
	if got := drain(q); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// docLine returns the line of ../docs/workload.md (generated from
// workload.Spec) that contains key.
func docLine(t *testing.T, key string) string {
	t.Helper()
	data, err := os.ReadFile("../docs/workload.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, key) {
			return line
		}
	}
	t.Fatalf("docs/workload.md has no line with %s", key)
	return ""
}
