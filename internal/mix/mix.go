// Package mix holds the 64-bit mixing function that roofsim's content keys,
// random-stream seeds and prefix-cache block hashes are built from.
package mix

// SplitMix64 is the finalizer of the SplitMix64 generator: a bijection on
// uint64 in which every input bit affects every output bit with probability
// close to 1/2. Being a bijection, distinct inputs give distinct outputs.
func SplitMix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
