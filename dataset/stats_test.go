package dataset

import (
	"reflect"
	"strings"
	"testing"

	"github.com/textarmor/textarmor/text"
)

func TestComputeStats(t *testing.T) {
	var exs []Example
	// Lengths 1..100, labels 0 and 2 (label 1 unused).
	for n := 1; n <= 100; n++ {
		exs = append(exs, Example{Text: strings.TrimSpace(strings.Repeat("w ", n-1) + "Last"), Label: 2 * (n % 2)})
	}
	s := ComputeStats(exs, nil)
	want := Stats{Count: 100, LabelCounts: []int{50, 0, 50}, Tokens: 5050, Mean: 50.5,
		Min: 1, P50: 50, P90: 90, P95: 95, P99: 99, Max: 100, VocabSize: 2}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}

	// The tokenizer matters: flat splits clitics and drops punctuation.
	small := []Example{{Text: "Don't!", Label: 0}, {Text: "it's", Label: 1}, {Text: "IT", Label: 1}}
	s = ComputeStats(small, text.NewFlat())
	want = Stats{Count: 3, LabelCounts: []int{1, 2}, Tokens: 5, Mean: 5.0 / 3,
		Min: 1, P50: 2, P90: 2, P95: 2, P99: 2, Max: 2, VocabSize: 4}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("flat: got %+v\nwant %+v", s, want)
	}
	if s := ComputeStats(nil, nil); !reflect.DeepEqual(s, Stats{}) {
		t.Errorf("empty: %+v", s)
	}
	if s := ComputeStats([]Example{{Text: "a", Label: -1}}, nil); s.LabelCounts != nil || s.Count != 1 {
		t.Errorf("negative label: %+v", s)
	}
}

func TestStatsFormat(t *testing.T) {
	s := ComputeStats([]Example{{Text: "a b", Label: 0}, {Text: "c", Label: 1}, {Text: "d", Label: 1}, {Text: "e", Label: 3}}, nil)
	out := s.Format([]string{"neg", "pos"})
	flat := strings.Join(strings.Fields(out), " ") // ignore column widths
	for _, want := range []string{"examples 4", "vocabulary 5", "mean 1.2", "p50 1", "max 2",
		"neg 1 25.0%", "pos 2 50.0%", "2 0 0.0%", "3 1 25.0%"} {
		if !strings.Contains(flat, want) {
			t.Errorf("Format output lacks %q:\n%s", want, out)
		}
	}
	// Classes without examples are listed too.
	if out := (Stats{}).Format([]string{"a", "b"}); !strings.Contains(strings.Join(strings.Fields(out), " "), "b 0 0.0%") {
		t.Errorf("empty stats:\n%s", out)
	}
}
