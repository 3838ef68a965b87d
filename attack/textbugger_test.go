package attack

import (
	"context"
	"math"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/textarmor/textarmor/lexicon"
	"github.com/textarmor/textarmor/text"
)

// bugs returns the three random bugs of word at index under seed ("" where
// a bug gives nothing).
func bugs(seed int64, word string, index int) (ins, del, swp string) {
	tb := TextBugger{Seed: seed}
	ins, _ = tb.InsertSpace(word, index)
	del, _ = tb.Delete(word, index)
	swp, _ = tb.Swap(word, index)
	return
}

// TestTextBuggerRandomBugsOfHello: over many seeds, each random bug of
// "hello" takes exactly the values TextAttack's ranges allow (never at the
// first or last character), each about as often as a uniform draw gives it.
func TestTextBuggerRandomBugsOfHello(t *testing.T) {
	const n = 600
	count := map[string]int{}
	for seed := int64(0); seed < n; seed++ {
		ins, del, swp := bugs(seed, "hello", 3)
		count["ins:"+ins]++
		count["del:"+del]++
		count["swp:"+swp]++
		_, _, swp2 := bugs(seed, "world", 3)
		count["swp2:"+swp2]++
	}
	// insert before character 1, 2 or 3 (never before h or o); delete e, l
	// or l ("helo" twice as often); swap e-l (l-l changes nothing, so no
	// candidate); for "world" swap o-r or r-l.
	want := map[string]float64{
		"ins:h ello": 1.0 / 3, "ins:he llo": 1.0 / 3, "ins:hel lo": 1.0 / 3,
		"del:hllo": 1.0 / 3, "del:helo": 2.0 / 3,
		"swp:hlelo": 0.5, "swp:": 0.5,
		"swp2:wrold": 0.5, "swp2:wolrd": 0.5,
	}
	for k, c := range count {
		p, ok := want[k]
		if !ok {
			t.Errorf("unexpected bug %q (%d times)", k, c)
			continue
		}
		// A binomial count stays within 5 standard deviations.
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(float64(c)-n*p) > 5*sd {
			t.Errorf("%q: %d of %d, expected about %.0f", k, c, n, n*p)
		}
	}
	for k := range want {
		if count[k] == 0 {
			t.Errorf("%q never drawn", k)
		}
	}
}

// TestTextBuggerCandidatesPinned pins the candidates of two words under
// seed 0, in their order: a change of the hash would change every stored
// run's perturbations.
func TestTextBuggerCandidatesPinned(t *testing.T) {
	tb := TextBugger{}
	got := tb.Substitutes([]string{"hello", "world"}, 0)
	want := []string{"he llo", "helo", "hlelo", "\u0570ello", "h\u0435llo", "he\u217Clo", "hel\u217Co", "hell\u043E"}
	if !slices.Equal(got, want) {
		t.Errorf("hello: %q, want %q", got, want)
	}
	got = tb.Substitutes([]string{"hello", "world"}, 1)
	want = []string{"wor ld", "word", "wolrd", "\u051Dorld", "w\u043Erld", "wo\u2C85ld", "wor\u217Cd", "worl\u0501"}
	if !slices.Equal(got, want) {
		t.Errorf("world: %q, want %q", got, want)
	}
}

// TestTextBuggerHomoglyphs: one candidate per character in TextAttack's
// table, first and last included; the table's code points.
func TestTextBuggerHomoglyphs(t *testing.T) {
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"hello", []string{"\u0570ello", "h\u0435llo", "he\u217Clo", "hel\u217Co", "hell\u043E"}},
		{"a1-'0", []string{"\u02511-'0", "al-'0", "a1\u02D7'0", "a1-`0", "a1-'O"}},
		{"x7", []string{"\u00D77", "x\U0001D7D5"}},
		{"ñü", nil},
		{"", nil},
	} {
		if got := Homoglyphs(tc.word); !slices.Equal(got, tc.want) {
			t.Errorf("Homoglyphs(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if len(homoglyphs) != 38 {
		t.Errorf("%d homoglyphs, TextAttack's table has 38", len(homoglyphs))
	}
	for c := 'a'; c <= 'z'; c++ {
		h, ok := HomoglyphOf(c)
		if !ok || h == c || h < 0x80 {
			t.Errorf("%c: homoglyph %q %v", c, h, ok)
		}
		if _, ok := HomoglyphOf(c - 'a' + 'A'); ok {
			t.Errorf("capital %c has a homoglyph", c-'a'+'A')
		}
	}
	for c, h := range map[rune]rune{'e': 0x435, 'o': 0x43E, 'l': 0x217C, 'm': 0xFF4D, 'k': 0x1D48C, '1': 'l', '0': 'O', '\'': '`'} {
		if got, _ := HomoglyphOf(c); got != h {
			t.Errorf("HomoglyphOf(%q) = %U, want %U", c, got, h)
		}
	}
}

// TestTextBuggerShortWords: words of 0 to 4 characters, punctuation and
// multi-byte characters give exactly what the ranges allow, for any seed
// and index, without panicking.
func TestTextBuggerShortWords(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		tb := TextBugger{Seed: seed}
		for idx := 0; idx < 3; idx++ {
			words := []string{"x", "a", "ab", "abc", "...", "--", "'", "", "aéb", "abcd"}
			for i, w := range words {
				words2 := slices.Clone(words)
				words2[idx], words2[i] = words2[i], words2[idx] // the word at index idx
				got := tb.Substitutes(words2, idx)
				for _, c := range got {
					if !utf8.ValidString(c) || c == w {
						t.Fatalf("%q: candidate %q", w, c)
					}
				}
				var want []string
				switch w {
				case "x":
					want = []string{"\u00D7"}
				case "a":
					want = []string{"\u0251"}
				case "ab":
					want = []string{"\u0251b", "a\u042C"}
				case "abc": // one possible position each; no swap
					want = []string{"a bc", "ac", "\u0251bc", "a\u042Cc", "ab\u03F2"}
				case "aéb":
					want = []string{"a éb", "ab", "\u0251éb", "aé\u042C"}
				case "...", "--", "'", "":
					want = nil
				case "abcd":
					ins, del, swp := bugs(seed, w, idx)
					if ins != "a bcd" && ins != "ab cd" || del != "acd" && del != "abd" || swp != "acbd" {
						t.Fatalf("abcd: %q %q %q", ins, del, swp)
					}
					want = append([]string{ins, del, swp}, Homoglyphs(w)...)
				}
				if !slices.Equal(got, want) {
					t.Errorf("seed %d, index %d: %q gives %q, want %q", seed, idx, w, got, want)
				}
			}
		}
		if got := tb.Substitutes([]string{"hello"}, 1); got != nil {
			t.Errorf("index out of range: %q", got)
		}
	}
}

// TestTextBuggerDeterministic: the candidates of a text are the same in
// any visiting order, from concurrent goroutines and from a fresh value;
// they depend on the word's index and on the seed.
func TestTextBuggerDeterministic(t *testing.T) {
	var words []string
	for i := 0; i < 60; i++ {
		words = append(words, []string{"hello", "wonderful", "terrible", "movie"}[i%4])
	}
	nb := lexicon.NewNeighbors("t")
	nb.Set("movie", []string{"film", "picture"})
	tb := TextBugger{Words: nb, Seed: 9}
	forward := make([][]string, len(words))
	for i := range words {
		forward[i] = tb.Substitutes(words, i)
	}
	backward := make([][]string, len(words))
	for i := len(words) - 1; i >= 0; i-- {
		backward[i] = TextBugger{Words: nb, Seed: 9}.Substitutes(words, i)
	}
	concurrent := make([][]string, len(words))
	var wg sync.WaitGroup
	for _, i := range rand.New(rand.NewSource(1)).Perm(len(words)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			concurrent[i] = tb.Substitutes(words, i)
		}()
	}
	wg.Wait()
	if !reflect.DeepEqual(forward, backward) || !reflect.DeepEqual(forward, concurrent) {
		t.Fatal("candidates depend on the visiting order")
	}
	inserts := map[string]bool{}
	for i := 0; i < len(words); i += 4 {
		inserts[forward[i][0]] = true
	}
	if len(inserts) < 2 {
		t.Errorf("every \"hello\" got the same space %v: the index must count", inserts)
	}
	other := TextBugger{Words: nb, Seed: 10}
	same := true
	for i := range words {
		same = same && slices.Equal(forward[i], other.Substitutes(words, i))
	}
	if same {
		t.Error("seed 10 gives seed 9's candidates")
	}
}

// TestTextBuggerSubW: the recipe's Sub-W takes the first 5 neighbours in
// their order, after the character bugs; a neighbour that repeats a bug
// is listed once, multi-word neighbours are dropped.
func TestTextBuggerSubW(t *testing.T) {
	nb := lexicon.NewNeighbors("nb")
	nb.Set("movie", []string{"film", "mvie", "picture", "flick", "motion_picture", "cinema", "show", "feature"})
	c, err := recipeTB(t, "", Resources{Synonyms: nb})
	if err != nil {
		t.Fatal(err)
	}
	tr := c.Transformation.(TextBugger)
	if got := tr.Words.Synonyms("movie"); !slices.Equal(got, []string{"film", "mvie", "picture", "flick", "motion_picture"}) {
		t.Fatalf("Sub-W source gives %q", got)
	}
	if got := tr.Words.Name(); got != "first5(nb)" {
		t.Errorf("Sub-W name %q", got)
	}
	// Find a seed whose deletion is "mvie", the neighbour's spelling.
	for seed := int64(0); ; seed++ {
		tr.Seed = seed
		if del, _ := tr.Delete("movie", 0); del != "mvie" {
			continue
		}
		got := tr.Substitutes([]string{"movie"}, 0)
		ins, _ := tr.InsertSpace("movie", 0)
		want := []string{ins, "mvie"}
		if swp, ok := tr.Swap("movie", 0); ok {
			want = append(want, swp)
		}
		want = append(append(want, Homoglyphs("movie")...), "film", "picture", "flick")
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %q, want %q", seed, got, want)
		}
		break
	}
}

func recipeTB(t *testing.T, protocol string, r Resources) (*Configured, error) {
	t.Helper()
	rc, err := LookupRecipe("textbugger")
	if err != nil {
		t.Fatal(err)
	}
	return rc.Build(protocol, r)
}

// TestTextBuggerRecipe: the recipe's parts, its deviations with and without
// the optional resources, its needs, and its refusals.
func TestTextBuggerRecipe(t *testing.T) {
	if !slices.Contains(RecipeNames(), "textbugger") {
		t.Fatalf("recipes: %v", RecipeNames())
	}
	syn := lexicon.NewNeighbors("syn")
	syn.Set("good", []string{"fine"})
	if _, err := recipeTB(t, ProtocolFTML, Resources{Synonyms: syn}); err == nil || !strings.Contains(err.Error(), "not part of the FTML protocol") {
		t.Errorf("ftml: %v", err)
	}
	if _, err := recipeTB(t, "", Resources{}); err == nil || !strings.Contains(err.Error(), "--synonyms") || !strings.Contains(err.Error(), "--vectors") {
		t.Errorf("no substitutes: %v", err)
	}
	common := []string{"random positions", "space-inserted word stays one position", "lower-cased", "best goal score"}
	has := func(c *Configured, subs ...string) {
		t.Helper()
		j := strings.Join(c.Deviations, "\n")
		for _, s := range subs {
			if !strings.Contains(j, s) {
				t.Errorf("deviations lack %q:\n%s", s, j)
			}
		}
	}

	c, err := recipeTB(t, ProtocolFLAT, Resources{Synonyms: syn})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Deviations) != 6 {
		t.Errorf("%d deviations: %q", len(c.Deviations), c.Deviations)
	}
	has(c, append(common, "first 5 of the counter-fitted neighbour sets", "GloVe", "USE sentence-similarity constraint (angular similarity ≥ 0.8")...)
	if _, ok := c.Goal.(Untargeted); !ok || c.Search != (Greedy{Order: ByDelete}) || len(c.Post) != 0 || !c.OOVAsUnk {
		t.Errorf("attack: %s", c.Description)
	}
	if len(c.Pre) != 2 || c.Pre[0] != (NoRepeat{}) {
		t.Fatalf("pre-constraints %v", c.Pre)
	}
	sw, ok := c.Pre[1].(StopWords)
	if !ok || !sw.Set.Has("the") || !sw.Set.Has("don't") || sw.Set.Has("movie") || !reflect.DeepEqual(sw.Set, lexicon.NLTKStopwords()) {
		t.Errorf("stop words %v", c.Pre[1])
	}
	if tr, ok := c.Transformation.(TextBugger); !ok || tr.Words.(firstN).n != 5 || tr.Seed != 0 {
		t.Errorf("transformation %s", c.Transformation.Name())
	}
	for _, part := range []string{"textbugger(insert-space,delete,swap,homoglyph,sub-w=first5(syn);seed=0)", "greedy-wir(delete)", "stopwords(nltk-english)", "repeat-modification", "oov=as-unk"} {
		if !strings.Contains(c.Description, part) {
			t.Errorf("description lacks %q: %s", part, c.Description)
		}
	}

	near := &NearestSet{Source: syn, K: 5, MinCos: -1, Vectors: "vec.txt"}
	c, err = recipeTB(t, "", Resources{Nearest: near, Encoder: bowEncoder{}})
	if err != nil {
		t.Fatal(err)
	}
	has(c, append(common, "Sub-W: the 5 nearest words in vec.txt", "GloVe", "USE replaced by bow-cosine")...)
	if j := strings.Join(c.Deviations, "\n"); strings.Contains(j, "neighbour sets") || strings.Contains(j, "omitted") {
		t.Errorf("deviations with vectors and an encoder:\n%s", j)
	}
	if tr := c.Transformation.(TextBugger); tr.Words != syn {
		t.Errorf("Sub-W source %s, want the nearest set", tr.Words.Name())
	}
	if len(c.Post) != 1 {
		t.Fatalf("post-constraints %v", c.Post)
	}
	ss, ok := c.Post[0].(SentenceSimilarity)
	if !ok || math.Abs(ss.Threshold-0.80901699) > 1e-8 || !ss.AgainstOriginal || ss.Window != 0 || ss.SkipShort {
		t.Errorf("similarity constraint %+v", c.Post[0])
	}
	c, err = recipeTB(t, "", Resources{Nearest: &NearestSet{Source: syn, K: 50, MinCos: 0.5, Vectors: "vec.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	has(c, "Sub-W: the 50 nearest neighbours with cosine ≥ 0.5 in vec.txt instead of the 5 nearest words")

	rc, _ := LookupRecipe("textbugger")
	if n := rc.Needs(""); !n.Nearest || n.NearestK != 5 || n.NearestCos != -1 || !n.Synonyms || !n.OOV || n.Encoder || n.Tagger || n.WordNet || n.LM {
		t.Errorf("needs %+v", n)
	}
	if n := rc.Needs(ProtocolFTML); n.Nearest {
		t.Errorf("ftml needs %+v", n)
	}
}

// recordingEncoder remembers the texts it compares and answers a fixed
// cosine.
type recordingEncoder struct {
	cos  float64
	seen *[][]string
}

func (recordingEncoder) Name() string { return "recording" }

func (e recordingEncoder) Similarity(a, b []string) float64 {
	*e.seen = append(*e.seen, a, b)
	return e.cos
}

// TestTextBuggerSimilarity: the encoder reads a space-inserted word as its
// two parts, compares with the original text, and the angular threshold
// 0.8 is cosine cos(0.2π) ≈ 0.809.
func TestTextBuggerSimilarity(t *testing.T) {
	syn := lexicon.NewNeighbors("syn")
	for _, tc := range []struct {
		cos  float64
		keep bool
	}{{0.805, false}, {0.8, false}, {0.8095, true}, {1, true}} {
		var seen [][]string
		c, err := recipeTB(t, "", Resources{Synonyms: syn, Encoder: recordingEncoder{cos: tc.cos, seen: &seen}})
		if err != nil {
			t.Fatal(err)
		}
		orig := []string{"a", "movie", "was", "good"}
		prev := []string{"a", "film", "was", "good"}
		next := []string{"a", "film", "was", "go od"}
		if got := c.Post[0].Check(orig, prev, next, 3); got != tc.keep {
			t.Errorf("cosine %g: kept %v", tc.cos, got)
		}
		want := [][]string{orig, {"a", "film", "was", "go", "od"}}
		if !reflect.DeepEqual(seen, want) {
			t.Errorf("the encoder compared %q, want %q", seen, want)
		}
	}
}

// bugVictim is a linear victim over a vocabulary: "hello" is worth +4, the
// bias +1, the words of parts −3 each, every other word 0. Only a
// candidate the model reads as those parts flips it.
func bugVictim(parts ...string) (*text.Vocab, *linear) {
	words := append([]string{text.PadWord, text.UnkWord, "the", "movie", "was", "hello"}, parts...)
	vocab, _ := text.NewVocab(words)
	m := &linear{w: map[int32]float64{vocab.ID("hello"): 4}, bias: 1}
	for _, p := range parts {
		m.w[vocab.ID(p)] = -3
	}
	return vocab, m
}

// recordingVictim remembers the lengths of the sequences it scores.
type recordingVictim struct {
	*linear
	mu   sync.Mutex
	lens map[int]bool
}

func (v *recordingVictim) Predict(seqs [][]int32) [][]float32 {
	v.mu.Lock()
	for _, q := range seqs {
		v.lens[len(q)] = true
	}
	v.mu.Unlock()
	return v.linear.Predict(seqs)
}

// TestTextBuggerSpaceReachesAWordModelAsTwoTokens: on a word-vocabulary
// model, "he llo" is scored as the two tokens the model reads in the
// written text (not as one UNK), and the text read back fools it.
func TestTextBuggerSpaceReachesAWordModelAsTwoTokens(t *testing.T) {
	ins, _ := TextBugger{}.InsertSpace("hello", 3)
	parts := strings.Fields(ins)
	vocab, m := bugVictim(parts...)
	v := &recordingVictim{linear: m, lens: map[int]bool{}}
	tg := Target{Victim: v, Vocab: vocab, Tok: text.NewWhitespace()}
	c, err := recipeTB(t, "", Resources{Synonyms: lexicon.NewNeighbors("none")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Run(tg, Example{Text: "the movie was hello", Label: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Type != Successful || r.PerturbedText != "the movie was "+ins || r.NumPerturbed != 1 {
		t.Fatalf("%+v", r)
	}
	if !v.lens[5] {
		t.Errorf("no 5-token sequence scored (lengths %v)", v.lens)
	}
	rs := []Result{r}
	if bad := CheckResults(c.Goal, tg, rs); bad != 0 || rs[0].Check != Verified {
		t.Errorf("read back: %+v", rs[0])
	}
	// Without the parts in the vocabulary every bug is UNK: +1, no flip.
	vocab2, m2 := bugVictim()
	if r, _ := c.Run(Target{Victim: m2, Vocab: vocab2, Tok: text.NewWhitespace()}, Example{Text: "the movie was hello", Label: 1}, 0); r.Type != Failed {
		t.Errorf("bugs as UNK flipped the model: %+v", r)
	}
}

// TestTextBuggerHomoglyphAsTheTokenizerReadsIt: the flat tokenizer reads
// every non-ASCII character as a separator, so "hеllo" (Cyrillic е) is the
// two tokens "h", "llo", and that is how the attack scores it.
func TestTextBuggerHomoglyphAsTheTokenizerReadsIt(t *testing.T) {
	vocab, m := bugVictim("h", "llo")
	m.w[vocab.ID("h")], m.w[vocab.ID("llo")] = -2, -2
	tg := Target{Victim: m, Vocab: vocab, Tok: text.NewFlat()}
	c, err := recipeTB(t, "", Resources{Synonyms: lexicon.NewNeighbors("none")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Run(tg, Example{Text: "The movie was hello!", Label: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Type != Successful || r.PerturbedText != "The movie was h\u0435llo!" {
		t.Fatalf("%+v", r)
	}
	rs := []Result{r}
	if CheckResults(c.Goal, tg, rs); rs[0].Check != Verified {
		t.Errorf("read back: %+v", rs[0])
	}
}

// TestTextBuggerTransformerReadsWordPieces: a victim that reads text
// (Target.Encode, a WordPiece tokenizer) gets each candidate written into
// the text and re-tokenized: the space-inserted word as two words of
// pieces, the other bugs as [UNK].
func TestTextBuggerTransformerReadsWordPieces(t *testing.T) {
	ins, _ := TextBugger{}.InsertSpace("hello", 3)
	parts := strings.Fields(ins)
	wp, err := text.NewWordPiece(append([]string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "hello"}, parts...), text.DefaultWordPieceOptions())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	read := map[string][]text.Piece{}
	encode := func(s string) []int32 {
		e := wp.Encode(s, 0)
		mu.Lock()
		read[s] = e.Pieces
		mu.Unlock()
		return e.IDs
	}
	helloID, _ := wp.ID("hello")
	m := &linear{w: map[int32]float64{helloID: 4}, bias: 1}
	for _, p := range parts {
		id, _ := wp.ID(p)
		m.w[id] = -3
	}
	tg := Target{Victim: m, Vocab: text.NewOpenVocab(), Tok: text.NewWhitespace(), Encode: encode, UnkText: "[UNK]"}
	c, err := recipeTB(t, "", Resources{Synonyms: lexicon.NewNeighbors("none")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Run(tg, Example{Text: "the movie was hello", Label: 1}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Type != Successful || r.PerturbedText != "the movie was "+ins {
		t.Fatalf("%+v", r)
	}
	pieces := read["the movie was "+ins]
	if len(pieces) != 7 || pieces[4].Text != parts[0] || pieces[5].Text != parts[1] || pieces[4].Word == pieces[5].Word {
		t.Errorf("the split word was read as %+v", pieces)
	}
	for _, cand := range c.Transformation.Substitutes([]string{"the", "movie", "was", "hello"}, 3)[1:] {
		p, ok := read["the movie was "+cand]
		if !ok || len(p) != 6 || p[4].Text != "[UNK]" {
			t.Errorf("%q was read as %+v (%v)", cand, p, ok)
		}
	}
}

// TestTextBuggerFlipsAGeneratedTask: end to end on the generated sentiment
// task, TextBugger flips some predictions (also with the character bugs
// alone), every success fools the model when its text is read back, and
// the results do not depend on the number of workers.
func TestTextBuggerFlipsAGeneratedTask(t *testing.T) {
	tg, syn, ex := synthTask()
	for _, sub := range []lexicon.Source{syn, lexicon.NewNeighbors("none")} {
		c, err := recipeTB(t, "", Resources{Synonyms: sub})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := RunAll(context.Background(), c.Attack, tg, ex, RunOptions{Workers: 1, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		ok := 0
		for _, r := range rs {
			if r.Type == Successful {
				ok++
				if r.PerturbedText == r.OriginalText || r.PerturbedOutput == r.GroundTruth || r.Check != Verified {
					t.Errorf("%s: %+v", sub.Name(), r)
				}
			}
		}
		if ok < len(ex)/4 {
			t.Errorf("%s: %d of %d examples flipped", sub.Name(), ok, len(ex))
		}
		again, err := RunAll(context.Background(), c.Attack, tg, ex, RunOptions{Workers: 3, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stripSeconds(rs), stripSeconds(again)) {
			t.Errorf("%s: 3 workers give other results than 1", sub.Name())
		}
	}
}
