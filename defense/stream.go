package defense

import (
	"math/rand"

	"github.com/textarmor/textarmor/internal/seeded"
)

// stream is an objective's own random stream, seeded on first use and
// counted, so that a training checkpoint can record how far it got and a
// resumed run continues it (train.Random).
type stream struct {
	r   *rand.Rand
	src *seeded.Source
}

func (s *stream) rand(seed int64) *rand.Rand {
	if s.r == nil {
		s.r, s.src = seeded.New(seed)
	}
	return s.r
}

func (s *stream) draws() uint64 {
	if s.src == nil {
		return 0
	}
	return s.src.Draws()
}

func (s *stream) skip(seed int64, n uint64) {
	s.rand(seed)
	s.src.Skip(n)
}
