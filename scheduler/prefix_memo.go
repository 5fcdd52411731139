package scheduler

// prefixMemo keeps the prefix-cache lookup of the request at the head of the waiting
// queue between steps, so that a head that cannot be admitted (no free blocks, no
// budget) costs O(1) per step instead of a fresh lookup of all its blocks: at block
// size 1 a 6,000-token shared prefix is 6,000 map lookups per step otherwise, and the
// run turns super-linear.
//
// The memo stays exact under every change the pool sees between two lookups:
//   - a hit block evicted (allocate uncaches it) cuts the hits there, as a fresh
//     lookup would stop at that block;
//   - a hit block taken or released by a running request moves the count of hits that
//     are free (evictable), which admission charges against free capacity;
//   - blocks registered since are found by resuming the lookup after the last hit.
//
// The pool calls the hooks below from allocate, touch and release (O(1) each), and
// pos marks the blocks of the memo; everything else is O(hits added or dropped).
type prefixMemo struct {
	req       *Request
	id        uint64 // req.ID: request states are recycled
	hits      []int32
	evictable int     // hits with reference count 0
	pos       []int32 // pos[b] = index of b in hits + 1; 0 when b is not a hit
}

// holds reports whether the memo is r's lookup.
func (m *prefixMemo) holds(r *Request) bool { return m.req == r && m.id == r.ID }

// reset forgets the memo and starts an empty one for r (nil: none).
func (m *prefixMemo) reset(p *blockPool, r *Request) {
	m.truncate(p, 0)
	m.req = r
	if r != nil {
		m.id = r.ID
	}
}

// add appends hit block b.
func (m *prefixMemo) add(p *blockPool, b int32) {
	if m.pos == nil {
		m.pos = make([]int32, p.n)
	}
	m.hits = append(m.hits, b)
	m.pos[b] = int32(len(m.hits))
	if p.ref[b] == 0 {
		m.evictable++
	}
}

// truncate keeps the first n hits.
func (m *prefixMemo) truncate(p *blockPool, n int) {
	for _, b := range m.hits[n:] {
		m.pos[b] = 0
		if p.ref[b] == 0 {
			m.evictable--
		}
	}
	m.hits = m.hits[:n]
}

// evicted is called before a free block b loses its cached content.
func (m *prefixMemo) evicted(p *blockPool, b int32) {
	if m.pos != nil && m.pos[b] > 0 {
		m.truncate(p, int(m.pos[b])-1)
	}
}

// refChanged is called after b's reference count went from 0 to 1 (taken) or from 1
// to 0 (released).
func (m *prefixMemo) refChanged(p *blockPool, b int32) {
	if m.pos == nil || m.pos[b] == 0 {
		return
	}
	if p.ref[b] == 0 {
		m.evictable++
	} else {
		m.evictable--
	}
}

// check verifies the memo against the pool, for CheckInvariants.
func (m *prefixMemo) check(p *blockPool) []string {
	var bad []string
	ev := 0
	for i, b := range m.hits {
		if m.pos[b] != int32(i+1) {
			bad = append(bad, "prefix memo: block position index out of date")
		}
		if !p.hashed[b] {
			bad = append(bad, "prefix memo: a hit block lost its content")
		}
		if p.ref[b] == 0 {
			ev++
		}
	}
	if ev != m.evictable {
		bad = append(bad, "prefix memo: evictable count out of date")
	}
	// The memo is a prefix of what a fresh lookup finds now (registrations since may
	// extend it; the next lookup resumes there).
	if m.req != nil {
		for i, b := range m.hits {
			if i >= len(m.req.hashes) {
				bad = append(bad, "prefix memo: more hits than hashed blocks")
				break
			}
			if got, ok := p.lookup(m.req.hashes[i]); !ok || got != b {
				bad = append(bad, "prefix memo: differs from a fresh lookup")
				break
			}
		}
	}
	return bad
}
