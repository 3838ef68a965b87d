package dataset

import (
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// SNLI's three files must have the same number of lines; the error names
// the short file and the first line it lacks.
func TestSNLIMisaligned(t *testing.T) {
	for _, tc := range []struct {
		rel, content string
		short        string
		line         int
	}{
		{"snli/s2.test", "A person .\nA woman .\nAn animal .\n", "snli/s2.test", 4},
		{"snli/s1.test", "A man .\nA man .\nA dog .\nA cat .\nA cow .\n", "snli/labels.test", 5},
	} {
		dir := fixtureDir(t)
		writeTemp(t, dir, tc.rel, tc.content)
		_, err := Load("snli", dir)
		var le *LineError
		if !errors.As(err, &le) || le.Path != filepath.Join(dir, filepath.FromSlash(tc.short)) || le.Line != tc.line || !strings.Contains(le.Msg, "aligned") {
			t.Errorf("%s: error %v, want %s:%d", tc.rel, err, tc.short, tc.line)
		}
	}
}

func TestHasPairs(t *testing.T) {
	if HasPairs([]Example{{Text: "a"}, {Text: "b", Label: 1}}) || HasPairs(nil) {
		t.Error("single texts taken for pairs")
	}
	if !HasPairs([]Example{{Text: "a"}, {Text: "b", Text2: "c"}}) {
		t.Error("pair not seen")
	}
	ds := &Dataset{Test: []Example{{Text: "a", Text2: "b"}}}
	if !ds.Pairs() || (&Dataset{Train: []Example{{Text: "a"}}}).Pairs() {
		t.Error("Dataset.Pairs")
	}
}

// SplitByFirst never splits a premise's pairs, holds out at least n, keeps
// the input order and depends only on the seed.
func TestSplitByFirst(t *testing.T) {
	var ex []Example
	for i := 0; i < 40; i++ {
		for j := 0; j < 1+i%4; j++ {
			ex = append(ex, Example{Text: fmt.Sprint("p", i), Text2: fmt.Sprint("h", i, j), Label: j % 3})
		}
	}
	for _, n := range []int{0, 1, 10, 50, len(ex), len(ex) + 5} {
		a, b := SplitByFirst(ex, n, 7)
		if len(a)+len(b) != len(ex) || len(b) < min(n, len(ex)) || (n == 0 && len(b) != 0) {
			t.Fatalf("n=%d: %d + %d of %d", n, len(a), len(b), len(ex))
		}
		// Once n is reached no further premise is taken: the last one
		// added has at most 4 pairs.
		if len(b) >= n+4 {
			t.Errorf("n=%d: held out %d", n, len(b))
		}
		inB := map[string]bool{}
		for _, e := range b {
			inB[e.Text] = true
		}
		for _, e := range a {
			if inB[e.Text] {
				t.Fatalf("n=%d: premise %s on both sides", n, e.Text)
			}
		}
		for _, part := range [][]Example{a, b} {
			for k := 1; k < len(part); k++ {
				if indexOf(ex, part[k]) < indexOf(ex, part[k-1]) {
					t.Fatalf("n=%d: order not kept", n)
				}
			}
		}
	}
	a1, b1 := SplitByFirst(ex, 10, 7)
	a2, b2 := SplitByFirst(ex, 10, 7)
	_, b3 := SplitByFirst(ex, 10, 8)
	if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(b1, b2) || reflect.DeepEqual(b1, b3) {
		t.Error("not a function of the seed")
	}
}

func indexOf(ex []Example, e Example) int {
	for i, x := range ex {
		if x == e {
			return i
		}
	}
	return -1
}

// pairHash fingerprints a split's texts, second texts and labels, in order.
func pairHash(ex []Example) uint64 {
	h := fnv.New64a()
	for _, e := range ex {
		h.Write([]byte(e.Text))
		h.Write([]byte{0})
		h.Write([]byte(e.Text2))
		h.Write([]byte{0, byte(e.Label), 0})
	}
	return h.Sum64()
}

// README: MRPC train 4,076 (pos 2,753 / neg 1,323); test 1,725 (1,147 /
// 578). Our dev is a seeded stratified 408 of train.
func TestRealMRPC(t *testing.T) {
	ds := loadReal(t, "mrpc")
	checkSplits(t, ds, splitWant{3668, []int{1191, 2477}}, splitWant{408, []int{132, 276}}, splitWant{1725, []int{578, 1147}})
	first := Example{Text: `Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence.`,
		Text2: `Referring to him as only "the witness", Amrozi accused his brother of deliberately distorting his evidence.`, Label: 1}
	if all := append(append([]Example{}, ds.Train...), ds.Dev...); indexOf(all, first) < 0 {
		t.Errorf("the first train pair is not in train or dev")
	}
	for _, s := range [][]Example{ds.Train, ds.Dev, ds.Test} {
		for _, e := range s {
			if e.Text2 == "" || strings.ContainsAny(e.Text+e.Text2, "\t\ufeff") {
				t.Fatalf("pair %+v", e)
			}
		}
	}
	assertPairGolden(t, ds, 0x334129c69b04d56a, 0x2c79c34e79a8f331)
}

// assertPairGolden pins a pair dataset's seeded dev split and its test
// split (texts, second texts and labels).
func assertPairGolden(t *testing.T, ds *Dataset, dev, test uint64) {
	t.Helper()
	if got := pairHash(ds.Dev); got != dev {
		t.Errorf("%s dev split changed: hash %#x, want %#x", ds.Name, got, dev)
	}
	if got := pairHash(ds.Test); got != test {
		t.Errorf("%s test split changed: hash %#x, want %#x", ds.Name, got, test)
	}
}

// README: SNLI dev 9,842 (E 3,329 / N 3,235 / C 3,278); test 9,824 (3,368 /
// 3,219 / 3,237); the '-' pairs were already removed. Train and dev come
// from SNLI dev, held out by premise.
func TestRealSNLI(t *testing.T) {
	ds := loadReal(t, "snli")
	if len(ds.Train)+len(ds.Dev) != 9842 || !reflect.DeepEqual(counts(append(append([]Example{}, ds.Train...), ds.Dev...), 3), []int{3329, 3235, 3278}) {
		t.Errorf("SNLI dev: %d + %d pairs", len(ds.Train), len(ds.Dev))
	}
	// 334 premises make 985 pairs (round(10% of 9,842) = 984 reached).
	checkSplits(t, ds, splitWant{8857, []int{2996, 2913, 2948}}, splitWant{985, []int{333, 322, 330}}, splitWant{9824, []int{3368, 3219, 3237}})
	assertPairGolden(t, ds, 0x1c4dd42b1dd59c2a, 0x4d89d50e799cfcab)
	if !strings.Contains(strings.Join(ds.Notes, "\n"), "dropped: 0 in dev, 0 in test") {
		t.Errorf("notes %q", ds.Notes)
	}
	premises := map[string]bool{}
	for _, e := range ds.Dev {
		premises[e.Text] = true
	}
	for _, e := range ds.Train {
		if premises[e.Text] {
			t.Fatalf("premise %q in train and dev", e.Text)
		}
	}
	// No test pair is trained on.
	trained := map[Example]bool{}
	for _, e := range ds.Train {
		trained[e] = true
	}
	for _, e := range ds.Test {
		if trained[e] {
			t.Fatalf("test pair %+v is in train", e)
		}
	}
	if e := ds.Test[0]; strings.HasSuffix(e.Text, " ") || strings.HasSuffix(e.Text2, " ") {
		t.Errorf("trailing space kept: %+v", e)
	}
	if len(premises) != 334 {
		t.Errorf("dev holds %d premises", len(premises))
	}
}
