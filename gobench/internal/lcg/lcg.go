// Package lcg implements the MINSTD generator that both benchmark programs
// use to derive their inputs: x[0] = seed, x[k+1] = 48271 * x[k] mod (2^31 - 1).
package lcg

const (
	// Multiplier is the MINSTD multiplier.
	Multiplier = 48271
	// Modulus is the MINSTD modulus, 2^31 - 1.
	Modulus = 2147483647
)

// Gen yields x[0], x[1], ... of the sequence started at a seed.
type Gen struct {
	x uint64
}

// New returns a generator whose first value is seed.
func New(seed uint64) *Gen {
	return &Gen{x: seed}
}

// Next returns the current element and advances the sequence.
func (g *Gen) Next() uint64 {
	v := g.x
	g.x = g.x * Multiplier % Modulus
	return v
}

// Values returns the first n raw elements x[0] .. x[n-1].
func Values(seed uint64, n int) []uint64 {
	out := make([]uint64, n)
	g := New(seed)
	for i := range out {
		out[i] = g.Next()
	}
	return out
}

// Mod returns the first n elements reduced modulo m (m must be positive).
func Mod(seed uint64, n int, m uint64) []uint64 {
	if m == 0 {
		panic("lcg: modulus must be positive")
	}
	out := Values(seed, n)
	for i := range out {
		out[i] %= m
	}
	return out
}
