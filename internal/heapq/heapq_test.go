package heapq

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

type kv struct {
	k Key
	v int
}

func compareKeys(a, b Key) int {
	return cmp.Or(cmp.Compare(a.Major, b.Major), cmp.Compare(a.Minor, b.Minor), cmp.Compare(a.Tie, b.Tie))
}

func sortRef(ref []kv) { slices.SortFunc(ref, func(a, b kv) int { return compareKeys(a.k, b.k) }) }

// checkHeap verifies the heap property of every parent-child pair.
func checkHeap(t *testing.T, h *Heap[int]) {
	t.Helper()
	s := h.items
	for i := 1; i < len(s); i++ {
		if s[i].key.Less(&s[(i-1)/2].key) {
			t.Fatalf("entry %d (%v) is less than its parent %v", i, s[i].key, s[(i-1)/2].key)
		}
	}
}

func TestKeyLessIsLexicographic(t *testing.T) {
	keys := []Key{{-5, 9, 9}, {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {1, 0, 7}, {1 << 40, 0, 0}}
	for i := range keys {
		for j := range keys {
			if got, want := keys[i].Less(&keys[j]), i < j; got != want {
				t.Errorf("%v.Less(%v) = %v, want %v", keys[i], keys[j], got, want)
			}
		}
	}
}

// A random mix of pushes, pops and top replacements pops exactly what a sorted
// reference list gives, values included, and the heap property holds after every
// operation. Keys repeat their Major and Minor parts often; Tie is unique.
func TestAgainstSortedReference(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var h Heap[int]
		var ref []kv
		seq := uint64(0)
		next := func() kv {
			seq++
			return kv{Key{int64(rng.IntN(20)) - 5, uint64(rng.IntN(3)), seq}, int(seq) * 10}
		}
		for op := 0; op < 300; op++ {
			switch r := rng.IntN(10); {
			case r < 5 || len(ref) == 0:
				x := next()
				h.Push(x.k, x.v)
				ref = append(ref, x)
			case r < 8:
				sortRef(ref)
				if k, v := h.Peek(); k != ref[0].k || v != ref[0].v {
					t.Fatalf("seed %d: Peek %v %d, want %v", seed, k, v, ref[0])
				}
				if k, v := h.Pop(); k != ref[0].k || v != ref[0].v {
					t.Fatalf("seed %d: Pop %v %d, want %v", seed, k, v, ref[0])
				}
				ref = ref[1:]
			default:
				sortRef(ref)
				x := next()
				h.ReplaceTop(x.k, x.v)
				ref[0] = x
			}
			if h.Len() != len(ref) {
				t.Fatalf("seed %d: Len %d, want %d", seed, h.Len(), len(ref))
			}
			checkHeap(t, &h)
		}
		n := 0
		for k, v := range h.All() {
			if v != int(k.Tie)*10 {
				t.Fatalf("seed %d: All yields %v with value %d", seed, k, v)
			}
			n++
		}
		if n != len(ref) {
			t.Fatalf("seed %d: All yields %d entries, want %d", seed, n, len(ref))
		}
		sortRef(ref)
		for _, want := range ref {
			if k, v := h.Pop(); k != want.k || v != want.v {
				t.Fatalf("seed %d: drain popped %v %d, want %v", seed, k, v, want)
			}
		}
	}
}

// Pop clears the vacated slot, so a heap of pointers does not keep popped values
// reachable; Clear empties the heap and keeps its storage.
func TestPopAndClearDropReferences(t *testing.T) {
	var h Heap[*int]
	for i := range 5 {
		h.Push(Key{Major: int64(i)}, &i)
	}
	h.Pop()
	if tail := h.items[:5][4]; tail.val != nil {
		t.Fatalf("popped slot still holds %v", *tail.val)
	}
	c := cap(h.items)
	h.Clear()
	if h.Len() != 0 || cap(h.items) != c {
		t.Fatalf("after Clear: len %d cap %d, want 0 and %d", h.Len(), cap(h.items), c)
	}
	for _, x := range h.items[:4] {
		if x.val != nil {
			t.Fatal("Clear left a reference behind")
		}
	}
}

func TestEmptyHeapPanics(t *testing.T) {
	for name, f := range map[string]func(h *Heap[int]){
		"Peek":       func(h *Heap[int]) { h.Peek() },
		"Pop":        func(h *Heap[int]) { h.Pop() },
		"ReplaceTop": func(h *Heap[int]) { h.ReplaceTop(Key{}, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("%s on an empty heap did not panic", name)
				}
			}()
			f(&Heap[int]{})
		})
	}
}

// FuzzHeap pushes the fuzzer's bytes as keys (a 0 byte pops) and checks that
// entries come out in key order.
func FuzzHeap(f *testing.F) {
	f.Add([]byte{5, 3, 0, 9, 9, 1, 0, 0, 4})
	f.Add([]byte{255, 0, 255, 0, 0, 0, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Heap[int]
		var ref []kv
		for i, b := range data {
			if b == 0 && len(ref) > 0 {
				sortRef(ref)
				if k, v := h.Pop(); k != ref[0].k || v != ref[0].v {
					t.Fatalf("Pop %v %d, want %v", k, v, ref[0])
				}
				ref = ref[1:]
				continue
			}
			x := kv{Key{int64(b % 8), uint64(b / 64), uint64(i)}, i}
			h.Push(x.k, x.v)
			ref = append(ref, x)
		}
		sortRef(ref)
		for _, want := range ref {
			if k, v := h.Pop(); k != want.k || v != want.v {
				t.Fatalf("drain popped %v %d, want %v", k, v, want)
			}
		}
	})
}

// BenchmarkPushPop is the engine's pattern: a queue of a few dozen events, one
// pop and one push per operation.
func BenchmarkPushPop(b *testing.B) {
	for _, n := range []int{4, 64, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var h Heap[[2]int32]
			rng := rand.New(rand.NewPCG(1, 2))
			seq := uint64(0)
			for range n {
				seq++
				h.Push(Key{Major: int64(rng.IntN(1000)), Tie: seq}, [2]int32{})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				k, v := h.Pop()
				seq++
				k.Major += int64(rng.IntN(1000))
				k.Tie = seq
				h.Push(k, v)
			}
		})
	}
}
