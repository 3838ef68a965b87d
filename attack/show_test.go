package attack

import (
	"fmt"
	"strings"
	"testing"
)

func TestWordDiffAndShow(t *testing.T) {
	a, b := WordDiff("the film was great , truly", "the movie was great , really")
	want := []bool{false, true, false, false, false, true}
	for i := range want {
		if a.Changed[i] != want[i] || b.Changed[i] != want[i] {
			t.Fatalf("changed %v / %v, want %v", a.Changed, b.Changed, want)
		}
	}
	// Different lengths fall back to the LCS.
	a, b = WordDiff("a b c d", "a x y c d")
	if fmt.Sprint(a.Changed) != "[false true false false]" || fmt.Sprint(b.Changed) != "[false true true false false]" {
		t.Errorf("lcs diff %v / %v", a.Changed, b.Changed)
	}
	r := Result{Index: 3, Type: Successful, OriginalText: "a good film", PerturbedText: "a decent film",
		OriginalOutput: 1, PerturbedOutput: 0, NumWords: 3, NumPerturbed: 1, NumQueries: 9}
	plain, col := r.Show([]string{"neg", "pos"}, false), r.Show([]string{"neg", "pos"}, true)
	if want := "--- example 3: Successful (pos → neg, 1/3 words, 9 queries)\n- a [[good]] film\n+ a [[decent]] film\n"; plain != want {
		t.Errorf("plain:\n%q\nwant\n%q", plain, want)
	}
	if !strings.Contains(col, ansiBefore+"good"+ansiReset) || !strings.Contains(col, ansiAfter+"decent"+ansiReset) {
		t.Errorf("colour: %q", col)
	}
	failed := Result{Index: 4, Type: Failed, OriginalOutput: 0, NumQueries: 5, Note: "query budget"}
	if got, want := failed.Show(nil, false), "--- example 4: Failed (0 kept, 5 queries; query budget)\n"; got != want {
		t.Errorf("failed: %q, want %q", got, want)
	}
}
