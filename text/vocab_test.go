package text

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestBuildVocab(t *testing.T) {
	docs := [][]string{
		{"the", "cat", "sat", "on", "the", "mat"},
		{"the", "dog", "sat"},
		{"a", "cat", "<unk>", "<pad>"},
	}
	// counts: the 3, cat 2, sat 2, a 1, dog 1, mat 1, on 1
	tests := []struct {
		name              string
		minCount, maxSize int
		want              []string
	}{
		{"all", 1, 0, []string{PadWord, UnkWord, "the", "cat", "sat", "a", "dog", "mat", "on"}},
		{"minCount 0 acts as 1", 0, 0, []string{PadWord, UnkWord, "the", "cat", "sat", "a", "dog", "mat", "on"}},
		{"count >= 2 (frequency > 1)", 2, 0, []string{PadWord, UnkWord, "the", "cat", "sat"}},
		{"count >= 3", 3, 0, []string{PadWord, UnkWord, "the"}},
		{"none", 4, 0, []string{PadWord, UnkWord}},
		{"cap 2, tie broken lexicographically", 1, 2, []string{PadWord, UnkWord, "the", "cat"}},
		{"cap larger than vocab", 1, 100, []string{PadWord, UnkWord, "the", "cat", "sat", "a", "dog", "mat", "on"}},
	}
	for _, tc := range tests {
		v := BuildVocab(docs, tc.minCount, tc.maxSize)
		if got := v.Words(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: words %q, want %q", tc.name, got, tc.want)
		}
		if v.Len() != len(tc.want) {
			t.Errorf("%s: Len %d", tc.name, v.Len())
		}
	}
	// Independent of document order.
	rev := [][]string{docs[2], docs[1], docs[0]}
	if !reflect.DeepEqual(BuildVocab(rev, 1, 0).Words(), BuildVocab(docs, 1, 0).Words()) {
		t.Error("vocabulary depends on document order")
	}
	if BuildVocab(nil, 1, 0).Len() != 2 {
		t.Error("empty corpus")
	}
}

func TestVocabLookup(t *testing.T) {
	v := BuildVocab([][]string{{"b", "a", "b"}}, 1, 0)
	tests := []struct {
		w  string
		id int32
	}{{PadWord, PadID}, {UnkWord, UnkID}, {"b", 2}, {"a", 3}, {"zzz", UnkID}, {"", UnkID}, {"B", UnkID}}
	for _, tc := range tests {
		if got := v.ID(tc.w); got != tc.id {
			t.Errorf("ID(%q) = %d, want %d", tc.w, got, tc.id)
		}
	}
	for id, w := range map[int32]string{0: PadWord, 1: UnkWord, 2: "b", 3: "a", 4: UnkWord, -1: UnkWord} {
		if got := v.Word(id); got != w {
			t.Errorf("Word(%d) = %q, want %q", id, got, w)
		}
	}
	for w, want := range map[string]bool{"a": true, "b": true, PadWord: true, UnkWord: true, "c": false} {
		if v.Has(w) != want {
			t.Errorf("Has(%q) = %v", w, !want)
		}
	}
	words := v.Words()
	words[2] = "mutated"
	if v.Word(2) != "b" {
		t.Error("Words returned the internal slice")
	}
	var zero Vocab
	if zero.ID("x") != UnkID || zero.Len() != 0 || zero.Word(0) != UnkWord || zero.Has("x") {
		t.Error("zero Vocab")
	}
}

func TestVocabEncode(t *testing.T) {
	v := BuildVocab([][]string{{"a", "b", "c"}}, 1, 0) // a=2 b=3 c=4
	tests := []struct {
		toks   []string
		maxLen int
		want   []int32
	}{
		{[]string{"a", "x", "c"}, 0, []int32{2, 1, 4}},
		{[]string{"a", "x", "c"}, 2, []int32{2, 1}},
		{[]string{"a", "x", "c"}, 3, []int32{2, 1, 4}},
		{[]string{"a", "x", "c"}, 10, []int32{2, 1, 4}},
		{[]string{"a"}, -1, []int32{2}},
		{nil, 5, []int32{}},
	}
	for _, tc := range tests {
		if got := v.Encode(tc.toks, tc.maxLen); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Encode(%q, %d) = %v, want %v", tc.toks, tc.maxLen, got, tc.want)
		}
	}
}

func TestNewVocab(t *testing.T) {
	tests := []struct {
		words []string
		err   string
	}{
		{[]string{PadWord, UnkWord}, ""},
		{[]string{PadWord, UnkWord, "x", "y"}, ""},
		{nil, "must start"},
		{[]string{PadWord}, "must start"},
		{[]string{UnkWord, PadWord}, "must start"},
		{[]string{PadWord, UnkWord, "x", "x"}, "twice"},
		{[]string{PadWord, UnkWord, PadWord}, "twice"},
		{[]string{PadWord, UnkWord, ""}, "empty"},
	}
	for _, tc := range tests {
		v, err := NewVocab(tc.words)
		if tc.err == "" {
			if err != nil || !reflect.DeepEqual(v.Words(), tc.words) {
				t.Errorf("NewVocab(%q) = %v, %v", tc.words, v, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("NewVocab(%q): error %v, want %q", tc.words, err, tc.err)
		}
	}
}

func TestVocabJSON(t *testing.T) {
	v := BuildVocab([][]string{{"x", "y", "y", "\"quoted\"", "é"}}, 1, 0)
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	if err := json.Unmarshal(data, &list); err != nil || !reflect.DeepEqual(list, v.Words()) {
		t.Fatalf("not a plain list: %s", data)
	}
	var back Vocab
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Words(), v.Words()) || back.ID("y") != v.ID("y") {
		t.Errorf("round trip: %q", back.Words())
	}
	// By value inside a struct too.
	type wrap struct{ V Vocab }
	data2, err := json.Marshal(wrap{*v})
	var w2 struct{ V []string }
	if err != nil || json.Unmarshal(data2, &w2) != nil || !reflect.DeepEqual(w2.V, v.Words()) {
		t.Errorf("embedded by value: %s %v", data2, err)
	}
	for _, bad := range []string{`["x"]`, `{"a":1}`, `["<pad>","<unk>","a","a"]`, `not json`} {
		var v Vocab
		if err := json.Unmarshal([]byte(bad), &v); err == nil {
			t.Errorf("Unmarshal(%s): no error", bad)
		}
	}
	if data, _ := json.Marshal(Vocab{}); string(data) != "[]" {
		t.Errorf("zero Vocab marshals as %s", data)
	}
}

// TestOpenVocab: every word gets an id, the same one each time, also when
// goroutines add words at once; Word maps ids back.
func TestOpenVocab(t *testing.T) {
	v := NewOpenVocab()
	if !v.Open() || v.Len() != 2 || v.ID("") != UnkID || !v.Has("anything") || v.Has("") {
		t.Fatalf("fresh open vocabulary: len %d, open %v", v.Len(), v.Open())
	}
	a := v.ID("alpha")
	if a != 2 || v.ID("alpha") != a || v.Word(a) != "alpha" {
		t.Fatalf("alpha got id %d, then %d, word %q", a, v.ID("alpha"), v.Word(a))
	}
	var wg sync.WaitGroup
	ids := make([][]int32, 4)
	for g := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				ids[g] = append(ids[g], v.ID(fmt.Sprintf("w%d", i)))
			}
		}()
	}
	wg.Wait()
	for g := range ids {
		for i, id := range ids[g] {
			if id != ids[0][i] || v.Word(id) != fmt.Sprintf("w%d", i) {
				t.Fatalf("goroutine %d word %d: id %d (first goroutine %d), word %q", g, i, id, ids[0][i], v.Word(id))
			}
		}
	}
	if v.Len() != 203 {
		t.Errorf("len %d, want 203", v.Len())
	}
	closed, _ := NewVocab([]string{PadWord, UnkWord, "x"})
	if closed.ID("y") != UnkID || closed.Len() != 3 || closed.Open() {
		t.Error("a closed vocabulary added a word")
	}
}
