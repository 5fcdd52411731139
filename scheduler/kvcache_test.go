package scheduler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lruPool is the reference free queue: vLLM's list of free blocks in order,
// every block with its identity, fresh blocks first in index order.
type lruPool struct {
	ref    []int32
	hashed []bool
	hash   []uint64
	queue  []int32
	cached map[uint64]int32
}

func newLRUPool(n int) *lruPool {
	p := &lruPool{ref: make([]int32, n), hashed: make([]bool, n), hash: make([]uint64, n), cached: map[uint64]int32{}}
	for b := range n {
		p.queue = append(p.queue, int32(b))
	}
	return p
}

func (p *lruPool) allocate() (b int32, wasCached bool) {
	b, p.queue = p.queue[0], p.queue[1:]
	wasCached = p.hashed[b]
	if wasCached {
		delete(p.cached, p.hash[b])
		p.hashed[b], p.hash[b] = false, 0
	}
	p.ref[b] = 1
	return b, wasCached
}

func (p *lruPool) release(b int32) {
	if p.ref[b]--; p.ref[b] == 0 {
		p.queue = append(p.queue, b)
	}
}

func (p *lruPool) touch(b int32) {
	if p.ref[b]++; p.ref[b] == 1 {
		p.queue = slices.DeleteFunc(p.queue, func(x int32) bool { return x == b })
	}
}

func (p *lruPool) register(b int32, h uint64) {
	if _, ok := p.cached[h]; ok || p.hashed[b] {
		return
	}
	p.cached[h], p.hash[b], p.hashed[b] = b, h, true
}

// pattern renders a free queue as its cached blocks (through name) and the
// counts of plain blocks between them.
func pattern(entries []int32, plainCount func(v int32) int, name func(b int32) int32) string {
	var s strings.Builder
	run := 0
	for _, v := range entries {
		if c := plainCount(v); c > 0 {
			run += c
			continue
		}
		if run > 0 {
			fmt.Fprintf(&s, "plain*%d ", run)
			run = 0
		}
		fmt.Fprintf(&s, "%d ", name(v))
	}
	if run > 0 {
		fmt.Fprintf(&s, "plain*%d", run)
	}
	return s.String()
}

// The block pool is vLLM's LRU free queue up to a relabelling of plain blocks: under
// random allocations, releases, registrations and prefix hits, a bijection between
// the reference's blocks and the pool's maps one state onto the other (reference
// counts, hashes, the cache index, the order of the free queue), and a cached block
// at the head is evicted under the same identity in both.
func TestBlockPoolIsLRUQueueRelabelled(t *testing.T) {
	compactions, maxStale := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0xb10c))
		// In 10 operations, allocs allocate; odd seeds allocate rarely from a
		// larger pool, so that hits and frees pile up stale entries.
		n, allocs := 1+rng.IntN(48), 4
		if seed%2 == 1 {
			n, allocs = 100+rng.IntN(200), 1
		}
		ref, p := newLRUPool(n), newBlockPool(n, true)
		pi, inv := make([]int32, n), make([]int32, n) // reference block -> pool block, and back
		for b := range n {
			pi[b], inv[b] = int32(b), int32(b)
		}
		var held []int32 // reference blocks, one entry per reference
		for op := 0; op < 3000; op++ {
			switch k := rng.IntN(10); {
			case k < allocs && len(ref.queue) > 0:
				r, wasCached := ref.allocate()
				b := p.allocate()
				if wasCached {
					if b != pi[r] {
						t.Fatalf("seed %d op %d: evicted block %d, reference evicted %d (pool %d)", seed, op, b, r, pi[r])
					}
				} else if r2, b2 := inv[b], pi[r]; r2 != r {
					pi[r], inv[b], pi[r2], inv[b2] = b, r, b2, r2
				}
				held = append(held, r)
			case k < allocs+3 && len(held) > 0:
				i := rng.IntN(len(held))
				r := held[i]
				held = slices.Delete(held, i, i+1)
				ref.release(r)
				p.release(pi[r])
			case k < allocs+4 && len(held) > 0:
				r, h := held[rng.IntN(len(held))], uint64(rng.IntN(2*n))
				ref.register(r, h)
				p.register(pi[r], h)
			case len(ref.cached) > 0:
				// Mostly hits on free blocks (taken out of the queue).
				free := rng.IntN(5) > 0
				hs := make([]uint64, 0, len(ref.cached))
				for h, r := range ref.cached {
					if (ref.ref[r] == 0) == free {
						hs = append(hs, h)
					}
				}
				if len(hs) == 0 {
					continue
				}
				slices.Sort(hs)
				h := hs[rng.IntN(len(hs))]
				r := ref.cached[h]
				if b, ok := p.lookup(h); !ok || b != pi[r] {
					t.Fatalf("seed %d op %d: hash %x in block %d, reference %d (pool %d)", seed, op, h, b, r, pi[r])
				}
				ref.touch(r)
				before := p.stale
				maxStale = max(maxStale, before)
				p.touch(pi[r])
				if p.stale < before {
					compactions++
				}
				held = append(held, r)
			}
			for r := range n {
				b := pi[r]
				if ref.ref[r] != p.ref[b] || ref.hashed[r] != p.hashed[b] || ref.hash[r] != p.hash[b] {
					t.Fatalf("seed %d op %d: reference block %d (ref %d hashed %v) != pool block %d (ref %d hashed %v)",
						seed, op, r, ref.ref[r], ref.hashed[r], b, p.ref[b], p.hashed[b])
				}
			}
			cachedFree := 0
			want := pattern(ref.queue, func(v int32) int {
				if ref.hashed[v] {
					cachedFree++
					return 0
				}
				return 1
			}, func(r int32) int32 { return pi[r] })
			var entries []int32
			for q := p.head; q < p.tail; q++ {
				if v := *p.at(q); v < 0 || p.qpos[v] == q+1 {
					entries = append(entries, v)
				}
			}
			got := pattern(entries, func(v int32) int { return int(max(-v, 0)) }, func(b int32) int32 { return b })
			if got != want || p.numFree != len(ref.queue) || p.numCachedFree != cachedFree {
				t.Fatalf("seed %d op %d: free queue %q (%d free, %d cached), reference %q (%d, %d)",
					seed, op, got, p.numFree, p.numCachedFree, want, len(ref.queue), cachedFree)
			}
		}
	}
	if compactions == 0 {
		t.Fatalf("the queue was never compacted (at most %d stale entries)", maxStale)
	}
}
