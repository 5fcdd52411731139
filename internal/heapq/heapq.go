// Package heapq is the binary min-heap every ordered queue in roofsim uses: the
// engine's event queue, the scheduler's priority and shortest-job-first waiting
// queues, and the workload generator's clients.
//
// Entries are ordered by a fixed three-part Key and carry a value of any type. The
// key is concrete rather than a type parameter with a Less method because Go compiles
// a method call on a type parameter as an indirect call through the instantiation's
// dictionary: measured on the engine's event queue, that made a push plus a pop about
// twice as slow as this heap, whose comparison is inlined. A key whose last part is
// unique (an insertion sequence, an ID) is a total order, so the pop order never
// depends on the order of pushes or on the heap's layout.
package heapq

import "iter"

// Key orders entries lexicographically: by Major, then Minor, then Tie.
type Key struct {
	Major int64
	Minor uint64
	Tie   uint64
}

// Less reports whether k sorts before o.
func (k *Key) Less(o *Key) bool {
	if k.Major != o.Major {
		return k.Major < o.Major
	}
	if k.Minor != o.Minor {
		return k.Minor < o.Minor
	}
	return k.Tie < o.Tie
}

type entry[V any] struct {
	key Key
	val V
}

// Heap is a binary min-heap of values ordered by their keys. The zero value is an
// empty heap ready to use. Push and Pop are O(log n) and do not allocate once the
// backing slice has grown; Peek and Len are O(1).
type Heap[V any] struct {
	items []entry[V]
}

// Len is the number of entries.
func (h *Heap[V]) Len() int { return len(h.items) }

// Peek returns the least entry without removing it. It panics when the heap is
// empty.
func (h *Heap[V]) Peek() (Key, V) {
	e := &h.items[0]
	return e.key, e.val
}

// Push adds v with key k.
func (h *Heap[V]) Push(k Key, v V) {
	h.items = append(h.items, entry[V]{k, v})
	h.up(len(h.items) - 1)
}

// Pop removes and returns the least entry. It panics when the heap is empty.
func (h *Heap[V]) Pop() (Key, V) {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items[n] = entry[V]{} // drop references held by the vacated slot
	h.items = h.items[:n]
	if n > 1 {
		h.down(0)
	}
	return top.key, top.val
}

// ReplaceTop replaces the least entry by v with key k and restores the order: a
// Pop followed by a Push for the cost of one sift. It panics when the heap is
// empty.
func (h *Heap[V]) ReplaceTop(k Key, v V) {
	h.items[0] = entry[V]{k, v}
	h.down(0)
}

// Clear removes every entry and keeps the storage for reuse.
func (h *Heap[V]) Clear() {
	clear(h.items)
	h.items = h.items[:0]
}

// All yields every entry in heap order (not sorted). The heap must not change
// during the iteration.
func (h *Heap[V]) All() iter.Seq2[Key, V] {
	return func(yield func(Key, V) bool) {
		for i := range h.items {
			if !yield(h.items[i].key, h.items[i].val) {
				return
			}
		}
	}
}

// up moves the entry at i towards the root until its parent is not greater.
func (h *Heap[V]) up(i int) {
	s := h.items
	x := s[i]
	for i > 0 {
		p := (i - 1) / 2
		if !x.key.Less(&s[p].key) {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = x
}

// down moves the entry at i towards the leaves until no child is less.
func (h *Heap[V]) down(i int) {
	s := h.items
	n := len(s)
	x := s[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].key.Less(&s[l].key) {
			m = r
		}
		if !s[m].key.Less(&x.key) {
			break
		}
		s[i] = s[m]
		i = m
	}
	s[i] = x
}
