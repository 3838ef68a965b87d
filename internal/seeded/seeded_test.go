package seeded

import (
	"math/rand"
	"testing"
)

// A counting source draws what math/rand's own source draws, through every
// kind of call the project makes.
func TestSameStreamAsMathRand(t *testing.T) {
	want := rand.New(rand.NewSource(42))
	got, _ := New(42)
	for i := 0; i < 200; i++ {
		if a, b := want.Float64(), got.Float64(); a != b {
			t.Fatalf("Float64 #%d: %v vs %v", i, a, b)
		}
		if a, b := want.Intn(1000), got.Intn(1000); a != b {
			t.Fatalf("Intn #%d: %v vs %v", i, a, b)
		}
		if a, b := want.NormFloat64(), got.NormFloat64(); a != b {
			t.Fatalf("NormFloat64 #%d: %v vs %v", i, a, b)
		}
		if a, b := want.Uint64(), got.Uint64(); a != b {
			t.Fatalf("Uint64 #%d: %v vs %v", i, a, b)
		}
	}
	pa, pb := want.Perm(50), got.Perm(50)
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("Perm differs at %d", i)
		}
	}
}

// A fresh source skipped to another's draw count continues its stream,
// whatever mix of calls produced the count.
func TestSkipContinuesStream(t *testing.T) {
	r, s := New(7)
	for i := 0; i < 137; i++ {
		switch i % 4 {
		case 0:
			r.Float32()
		case 1:
			r.Intn(17)
		case 2:
			r.NormFloat64()
		default:
			r.Uint64()
		}
	}
	n := s.Draws()
	if n == 0 {
		t.Fatal("no draws counted")
	}
	r2, s2 := New(7)
	s2.Skip(n)
	for i := 0; i < 50; i++ {
		if a, b := r.Int63(), r2.Int63(); a != b {
			t.Fatalf("draw %d after skipping %d: %d vs %d", i, n, a, b)
		}
	}
	// Skipping one draw too few is visible.
	r3, s3 := New(7)
	s3.Skip(n - 1)
	r4, s4 := New(7)
	s4.Skip(n)
	if r3.Int63() == r4.Int63() {
		t.Error("skip by n-1 and n gave the same next value")
	}
	s4.Seed(7)
	if s4.Draws() != 0 {
		t.Error("Seed did not restart the count")
	}
}

// TestMix: SplitMix64's first output from state 0 (the reference
// implementation's published value).
func TestMix(t *testing.T) {
	if got := Mix(0x9E3779B97F4A7C15); got != 0xE220A8397B1DCDAF {
		t.Fatalf("Mix = %#x, want 0xe220a8397b1dcdaf", got)
	}
}
