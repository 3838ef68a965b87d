package text

import (
	"slices"
	"testing"
)

func TestWordPieceWithTokens(t *testing.T) {
	wp := newTestWP(t, nil)
	if got := pieceTexts(wp.Tokenize("abcy hello")); !slices.Equal(got, []string{"abc", "##y", "hello"}) {
		t.Fatalf("before: %q", got)
	}
	ext, err := wp.WithTokens([]string{"abcy", "hellos"})
	if err != nil {
		t.Fatal(err)
	}
	if ext.Size() != wp.Size()+2 {
		t.Fatalf("size %d, want %d", ext.Size(), wp.Size()+2)
	}
	if id, ok := ext.ID("abcy"); !ok || int(id) != wp.Size() {
		t.Fatalf("abcy has id %d (%v), want %d", id, ok, wp.Size())
	}
	if got := pieceTexts(ext.Tokenize("ABCY hello abcyz")); !slices.Equal(got, []string{"abcy", "hello", "abcy", "##z"}) {
		t.Fatalf("after: %q", got)
	}
	if ext.Options().Lowercase != wp.Options().Lowercase {
		t.Fatal("options not kept")
	}
	for _, bad := range [][]string{{""}, {"hello"}, {"new", "new"}, {"##new"}, {"a b"}} {
		if _, err := wp.WithTokens(bad); err == nil {
			t.Errorf("WithTokens(%q) accepted", bad)
		}
	}
}

func TestWordPieceWords(t *testing.T) {
	wp := newTestWP(t, nil)
	// "abcy" is two pieces, "qq" is unknown, "," is a word of its own.
	got := wp.Words("Hello, ABCY qq world [SEP]!")
	want := []string{"hello", ",", "abcy", "world", "!"}
	if !slices.Equal(got, want) {
		t.Fatalf("Words = %q, want %q", got, want)
	}
	y, _ := wp.ID("##y")
	abc, _ := wp.ID("abc")
	if !wp.Continues(y) || wp.Continues(abc) || wp.Continues(-1) || wp.Continues(int32(wp.Size())) {
		t.Fatal("Continues wrong")
	}
}
