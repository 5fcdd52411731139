package scheduler

import (
	"fmt"

	"github.com/roofsim/roofsim/internal/heapq"
	"github.com/roofsim/roofsim/internal/registry"
)

// waitQueue orders the waiting requests. Implementations keep their storage across
// steps, so steady-state pushes and pops do not allocate.
type waitQueue interface {
	// Len is the number of waiting requests.
	Len() int
	// Push adds a newly arrived request.
	Push(r *Request)
	// PushFront returns a preempted request to the queue. FIFO puts it at the front;
	// ordered queues place it by its (unchanged) key.
	PushFront(r *Request)
	// Peek returns the next request to admit (Len() > 0).
	Peek() *Request
	// Pop removes and returns the next request to admit (Len() > 0).
	Pop() *Request
	// each calls f on every waiting request, in no particular order.
	each(f func(*Request))
}

var (
	_ waitQueue = (*fifoQueue)(nil)
	_ waitQueue = (*heapQueue)(nil)
)

// Policy names a waiting-queue policy (Config.Policy, the scheduling_policy
// setting). The zero Policy ("") means PolicyFCFS. Its text form is the name;
// UnmarshalText accepts only the names PolicyNames lists, and "".
type Policy string

// policies lists every waiting-queue policy by its Config.Policy name; adding one is
// one entry here (plus its Policy* constant and queue).
func policies() registry.Table[func() waitQueue] {
	return registry.Table[func() waitQueue]{Entries: []registry.Entry[func() waitQueue]{
		{Name: string(PolicyFCFS), Value: func() waitQueue { return &fifoQueue{} }},
		{Name: string(PolicyPriority), Value: func() waitQueue { return &heapQueue{key: byPriority} }},
		{Name: string(PolicySJF), Value: func() waitQueue { return &heapQueue{key: byPromptTokens} }},
	}}
}

// PolicyNames lists the accepted Config.Policy values ("" also means fcfs).
func PolicyNames() []string { return policies().Names() }

// UnknownPolicyError is a policy name that PolicyNames does not list; Known lists
// those it does.
type UnknownPolicyError struct {
	Name  string
	Known []string
}

func (e *UnknownPolicyError) Error() string {
	return fmt.Sprintf("unknown %q (want %s)", e.Name, policies().Want())
}

// ParsePolicy returns the policy called name ("" is the zero Policy), or an
// *UnknownPolicyError.
func ParsePolicy(name string) (Policy, error) {
	p := Policy(name)
	if err := p.Validate(); err != nil {
		return "", err
	}
	return p, nil
}

// Validate returns an *UnknownPolicyError when p is neither "" (fcfs) nor a name
// PolicyNames lists, such as `unknown "lifo" (want fcfs, priority or sjf)`.
func (p Policy) Validate() error {
	if _, err := newWaitQueue(p); err != nil {
		return &UnknownPolicyError{Name: string(p), Known: PolicyNames()}
	}
	return nil
}

// CheckPolicy is Policy(name).Validate.
func CheckPolicy(name string) error { return Policy(name).Validate() }

// MarshalText implements encoding.TextMarshaler: the name.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParsePolicy.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// newWaitQueue returns the waiting queue of the policy called name ("" means fcfs).
func newWaitQueue(name Policy) (waitQueue, error) {
	if name == "" {
		name = PolicyFCFS
	}
	newQueue, err := policies().Lookup(string(name))
	if err != nil {
		return nil, err
	}
	return newQueue(), nil
}

// fifoQueue is a ring-buffer deque: arrival order, preempted requests at the front.
type fifoQueue struct {
	buf  []*Request
	head int
	n    int
}

func (q *fifoQueue) Len() int { return q.n }

func (q *fifoQueue) grow() {
	if q.n < len(q.buf) {
		return
	}
	nb := make([]*Request, max(8, 2*len(q.buf)))
	for i := 0; i < q.n; i++ {
		nb[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = nb, 0
}

func (q *fifoQueue) Push(r *Request) {
	q.grow()
	q.buf[(q.head+q.n)%len(q.buf)] = r
	q.n++
}

func (q *fifoQueue) PushFront(r *Request) {
	q.grow()
	q.head = (q.head + len(q.buf) - 1) % len(q.buf)
	q.buf[q.head] = r
	q.n++
}

func (q *fifoQueue) Peek() *Request { return q.buf[q.head] }

func (q *fifoQueue) Pop() *Request {
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return r
}

func (q *fifoQueue) each(f func(*Request)) {
	for i := 0; i < q.n; i++ {
		f(q.buf[(q.head+i)%len(q.buf)])
	}
}

// heapQueue admits in the order of a key derived from each request: O(log n) push and
// pop. Keys end in the request's Seq and ID, so the order is total and never depends
// on insertion history.
type heapQueue struct {
	h   heapq.Heap[*Request]
	key func(r *Request) heapq.Key
}

// byPriority orders by Priority (lower first), then Seq, then ID.
func byPriority(r *Request) heapq.Key {
	return heapq.Key{Major: int64(r.Priority), Minor: r.Seq, Tie: r.ID}
}

// byPromptTokens orders by PromptTokens (shorter first), then Seq, then ID.
func byPromptTokens(r *Request) heapq.Key {
	return heapq.Key{Major: int64(r.PromptTokens), Minor: r.Seq, Tie: r.ID}
}

func (q *heapQueue) Len() int { return q.h.Len() }

func (q *heapQueue) Push(r *Request) { q.h.Push(q.key(r), r) }

// PushFront places a preempted request by its key, like vLLM's priority queue does:
// it keeps its Seq, so it precedes every later arrival with the same key.
func (q *heapQueue) PushFront(r *Request) { q.Push(r) }

func (q *heapQueue) Peek() *Request {
	_, r := q.h.Peek()
	return r
}

func (q *heapQueue) Pop() *Request {
	_, r := q.h.Pop()
	return r
}

func (q *heapQueue) each(f func(*Request)) {
	for _, r := range q.h.All() {
		f(r)
	}
}
