package scheduler

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

// newWaitQueue returns the queue for a validated policy name.
func newWaitQueue(policy string) waitQueue {
	switch policy {
	case PolicyPriority:
		return &heapQueue{less: lessPriority}
	case PolicySJF:
		return &heapQueue{less: lessSJF}
	default:
		return &fifoQueue{}
	}
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

// lessPriority orders by Priority (lower first), then Seq, then ID.
func lessPriority(a, b *Request) bool {
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}

// lessSJF orders by PromptTokens (shorter first), then Seq, then ID.
func lessSJF(a, b *Request) bool {
	if a.PromptTokens != b.PromptTokens {
		return a.PromptTokens < b.PromptTokens
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.ID < b.ID
}

// heapQueue is a binary min-heap under less: O(log n) push and pop. The order is
// total (ties end at ID), so it never depends on insertion history.
type heapQueue struct {
	h    []*Request
	less func(a, b *Request) bool
}

func (q *heapQueue) Len() int { return len(q.h) }

func (q *heapQueue) Push(r *Request) {
	q.h = append(q.h, r)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(q.h[i], q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

// PushFront places a preempted request by its key, like vLLM's priority queue does:
// it keeps its Seq, so it precedes every later arrival with the same key.
func (q *heapQueue) PushFront(r *Request) { q.Push(r) }

func (q *heapQueue) Peek() *Request { return q.h[0] }

func (q *heapQueue) Pop() *Request {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h[last] = nil
	q.h = q.h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(q.h) {
			break
		}
		m := l
		if r := l + 1; r < len(q.h) && q.less(q.h[r], q.h[l]) {
			m = r
		}
		if !q.less(q.h[m], q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

func (q *heapQueue) each(f func(*Request)) {
	for _, r := range q.h {
		f(r)
	}
}
