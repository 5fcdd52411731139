package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/roofsim/roofsim/hardware"
)

// FitCache remembers the fits of operator families within one process, so
// that a command sequence that fits the same family twice (the kernel fit
// and then the MoE refit of one GPU and release, in a rebuild plan) fits it
// once. A family's fit is a deterministic function of its name, rows,
// tilings, starting efficiency, seed, hold-out fraction and restarts; the
// key hashes all of them, so a hit returns exactly what the fit would.
// Safe for concurrent use; the zero value is not usable (NewFitCache).
type FitCache struct {
	mu   sync.Mutex
	fits map[[sha256.Size]byte]familyFit
	hits int
}

// NewFitCache returns an empty cache.
func NewFitCache() *FitCache { return &FitCache{fits: map[[sha256.Size]byte]familyFit{}} }

// Hits is the number of fits the cache answered.
func (c *FitCache) Hits() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits
}

// fit returns fitFamily(f, def, opts), from the cache when it has it; a nil
// cache always fits. Failed fits are not kept.
func (c *FitCache) fit(f opFamily, def *hardware.Profile, opts Options) familyFit {
	if c == nil {
		return fitFamily(f, def, opts)
	}
	key := familyKey(f, f.start(def), opts)
	c.mu.Lock()
	out, ok := c.fits[key]
	if ok {
		c.hits++
	}
	c.mu.Unlock()
	if ok {
		return out
	}
	out = fitFamily(f, def, opts)
	if out.err == nil {
		c.mu.Lock()
		c.fits[key] = out
		c.mu.Unlock()
	}
	return out
}

// familyKey hashes everything fitFamily reads: the family's name (its
// seed), tilings and rows, the starting efficiency, and the seed, hold-out
// fraction and restarts of opts. Floats enter by their bits.
func familyKey(f opFamily, init hardware.OpEfficiency, opts Options) [sha256.Size]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%q|%v|%#v|%d|%x|%d|%d|", f.name, f.tiles, init, opts.Seed, math.Float64bits(opts.HoldoutFraction), opts.Restarts, len(f.samples))
	var buf [8]byte
	put := func(v float64) {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
		h.Write(buf[:])
	}
	for _, s := range f.samples {
		for _, v := range []float64{s.FLOPs, s.Bytes, s.PeakFLOPS, s.BandwidthBytesPerSec, s.Seconds,
			float64(s.SeqHeads), float64(s.M), float64(s.N), float64(s.K), s.L2Bytes, s.Depth} {
			put(v)
		}
		if s.DefaultTiles {
			put(-1) // a marker no other field takes
		}
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}
