// Package seeded provides a seeded random source that counts its draws, so
// that a checkpoint can record where a random stream stands and a resumed
// run can continue the same stream instead of restarting it.
package seeded

import "math/rand"

// Source is math/rand's seeded source with a draw counter. rand.New(s)
// draws exactly what rand.New(rand.NewSource(seed)) draws.
type Source struct {
	src   rand.Source64
	draws uint64
}

// NewSource returns a source seeded like rand.NewSource(seed).
func NewSource(seed int64) *Source {
	return &Source{src: rand.NewSource(seed).(rand.Source64)}
}

// New returns a *rand.Rand on a counting source and the source.
func New(seed int64) (*rand.Rand, *Source) {
	s := NewSource(seed)
	return rand.New(s), s
}

// Int63 implements rand.Source.
func (s *Source) Int63() int64 {
	s.draws++
	return s.src.Int63()
}

// Uint64 implements rand.Source64. Int63 and Uint64 both advance the
// underlying generator by one step, so one counter covers both.
func (s *Source) Uint64() uint64 {
	s.draws++
	return s.src.Uint64()
}

// Seed implements rand.Source and restarts the count.
func (s *Source) Seed(seed int64) {
	s.src.Seed(seed)
	s.draws = 0
}

// Draws is how many values the source has produced since it was seeded.
func (s *Source) Draws() uint64 { return s.draws }

// Skip advances a freshly seeded source to where one that had produced n
// values stands (a no-op when it is already there or beyond).
func (s *Source) Skip(n uint64) {
	for s.draws < n {
		s.src.Uint64()
		s.draws++
	}
}

// Mix is SplitMix64's finaliser: a well-mixed 64-bit value from z, for
// counter-based streams (value i of a stream is Mix(seed + i·golden)).
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
