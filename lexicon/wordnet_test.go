package lexicon

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// fxSynset is one synset of a generated dictionary: its type letter and its
// words as written in the data file (markers included).
type fxSynset struct {
	typ   string
	words []string
}

// wnHeader imitates the licence lines that open every index and data file.
const wnHeader = "  1 This software and database is being provided to you, the LICENSEE, by  \n" +
	"  2 Princeton University under the following license.  \n"

// writePOS writes data.<suffix> and index.<suffix> for synsets, computing
// the real byte offsets, and returns them. index maps a lemma to synset
// numbers (positions in synsets), in sense order.
func writePOS(t *testing.T, dir, suffix, letter string, synsets []fxSynset, index map[string][]int) []int {
	t.Helper()
	var data strings.Builder
	data.WriteString(wnHeader)
	offsets := make([]int, len(synsets))
	for i, s := range synsets {
		offsets[i] = data.Len()
		fmt.Fprintf(&data, "%08d 03 %s %02x", offsets[i], s.typ, len(s.words))
		for _, w := range s.words {
			fmt.Fprintf(&data, " %s 0", w)
		}
		fmt.Fprintf(&data, " 001 @ 00000000 %s 0000 | gloss of synset %d  \n", letter, i)
	}
	writeFile(t, filepath.Join(dir, "data."+suffix), data.String())

	lemmas := make([]string, 0, len(index))
	for l := range index {
		lemmas = append(lemmas, l)
	}
	sort.Strings(lemmas)
	var idx strings.Builder
	idx.WriteString(wnHeader)
	for _, l := range lemmas {
		ss := index[l]
		fmt.Fprintf(&idx, "%s %s %d 1 @ %d 0", l, letter, len(ss), len(ss))
		for _, s := range ss {
			fmt.Fprintf(&idx, " %08d", offsets[s])
		}
		idx.WriteString("  \n")
	}
	writeFile(t, filepath.Join(dir, "index."+suffix), idx.String())
	return offsets
}

// tinyWordNet writes a small dictionary exercising morphy and lookup.
func tinyWordNet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writePOS(t, dir, "noun", "n", []fxSynset{
		{"n", []string{"dog", "domestic_dog", "Canis_familiaris"}}, // 0
		{"n", []string{"frump", "dog"}},                            // 1
		{"n", []string{"church", "church_building"}},               // 2
		{"n", []string{"man", "adult_male"}},                       // 3
		{"n", []string{"fly"}},                                     // 4
		{"n", []string{"mouse"}},                                   // 5
		{"n", []string{"axis"}},                                    // 6
		{"n", []string{"ax", "axe"}},                               // 7
		{"n", []string{"buss", "kiss"}},                            // 8
		{"n", []string{"box"}},                                     // 9
		{"n", []string{"glass", "drinking_glass"}},                 // 10
		{"n", []string{"spectacles", "glasses", "eyeglasses"}},     // 11
	}, map[string][]int{
		"dog": {0, 1}, "domestic_dog": {0}, "canis_familiaris": {0}, "frump": {1},
		"church": {2}, "church_building": {2}, "man": {3}, "adult_male": {3},
		"fly": {4}, "mouse": {5}, "axis": {6}, "ax": {7}, "axe": {7},
		"buss": {8}, "kiss": {8}, "box": {9}, "glass": {10}, "drinking_glass": {10},
		"spectacles": {11}, "glasses": {11}, "eyeglasses": {11},
	})
	writePOS(t, dir, "verb", "v", []fxSynset{
		{"v", []string{"chase", "dog"}}, // 0
		{"v", []string{"run", "go"}},    // 1
		{"v", []string{"fly", "wing"}},  // 2
	}, map[string][]int{"chase": {0}, "dog": {0}, "run": {1}, "go": {1}, "fly": {2}, "wing": {2}})
	writePOS(t, dir, "adj", "a", []fxSynset{
		{"a", []string{"good"}},                    // 0
		{"s", []string{"beneficial", "good"}},      // 1: a satellite
		{"a", []string{"big", "large(a)"}},         // 2: a syntactic marker
		{"s", []string{"galore(ip)", "abounding"}}, // 3
		{"a", []string{"well"}},                    // 4
	}, map[string][]int{"good": {0, 1}, "beneficial": {1}, "big": {2}, "large": {2}, "galore": {3}, "abounding": {3}, "well": {4}})
	writePOS(t, dir, "adv", "r", []fxSynset{
		{"r", []string{"well", "good"}}, // 0
	}, map[string][]int{"well": {0}, "good": {0}})
	writeFile(t, filepath.Join(dir, "noun.exc"), "axes ax axis\nbusses bus\nmice mouse\n")
	writeFile(t, filepath.Join(dir, "verb.exc"), "flew fly\nran run\n")
	writeFile(t, filepath.Join(dir, "adj.exc"), "better good well\n")
	writeFile(t, filepath.Join(dir, "adv.exc"), "best well\n")
	return dir
}

func openTiny(t *testing.T) *WordNet {
	t.Helper()
	wn, err := OpenWordNet(tinyWordNet(t))
	if err != nil {
		t.Fatal(err)
	}
	return wn
}

func TestMorphyRules(t *testing.T) {
	wn := openTiny(t)
	cases := []struct {
		form string
		pos  POS
		want []string
	}{
		{"dogs", Noun, []string{"dog"}},
		{"dog", Noun, []string{"dog"}},
		{"churches", Noun, []string{"church"}}, // ches -> ch
		{"men", Noun, []string{"man"}},         // men -> man
		{"flies", Noun, []string{"fly"}},       // ies -> y
		{"flies", Verb, []string{"fly"}},
		{"mice", Noun, []string{"mouse"}},               // exception list
		{"axes", Noun, []string{"ax", "axis"}},          // exception: several bases, list order
		{"busses", Noun, nil},                           // listed exception wins even when unknown ("buss" via rules is not tried)
		{"boxeses", Noun, []string{"box"}},              // rules applied twice
		{"glasses", Noun, []string{"glasses", "glass"}}, // the form itself first, then rule outputs
		{"ran", Verb, []string{"run"}},
		{"flew", Verb, []string{"fly"}},
		{"chases", Verb, []string{"chase"}}, // s -> "" and es -> e give the same form once
		{"larger", Adj, []string{"large"}},  // er -> e
		{"better", Adj, []string{"good", "well"}},
		{"best", Adv, []string{"well"}},
		{"wells", Adv, nil}, // adverbs have no detachment rules
		{"Dogs", Noun, nil}, // Morphy does not lower-case, like NLTK's
		{"cats", Noun, nil},
		{"dogs", Any, []string{"dog"}},
		{"better", Any, []string{"good", "well"}},
		{"fly", Any, []string{"fly"}},
	}
	for _, c := range cases {
		eq(t, fmt.Sprintf("Morphy(%q, %v)", c.form, c.pos), wn.Morphy(c.form, c.pos), c.want)
	}
	// A long run of suffixes must not blow up (NLTK's version is exponential).
	done := make(chan []string)
	go func() { done <- wn.Morphy(strings.Repeat("s", 60)+"es", Any) }()
	select {
	case got := <-done:
		eq(t, "s-run", got, []string(nil))
	case <-time.After(5 * time.Second):
		t.Fatal("Morphy on a long run of 's' did not finish")
	}
}

func TestSynsetsAndSynonyms(t *testing.T) {
	wn := openTiny(t)
	ss := wn.Synsets("Dogs", Any)
	var got []string
	for _, s := range ss {
		got = append(got, fmt.Sprintf("%v:%s", s.POS, strings.Join(s.Lemmas, ",")))
	}
	eq(t, "Synsets(Dogs)", got, []string{"n:dog,domestic_dog,Canis_familiaris", "n:frump,dog", "v:chase,dog"})
	if ss[0].Offset != int64(len(wnHeader)) {
		t.Errorf("first synset offset %d, want %d", ss[0].Offset, len(wnHeader))
	}
	eq(t, "Synsets(dog, Verb)", len(wn.Synsets("dog", Verb)), 1)

	// Satellites count as adjectives; markers are removed.
	adj := wn.Synsets("good", Adj)
	eq(t, "good adj", []bool{adj[0].Satellite, adj[1].Satellite}, []bool{false, true})
	eq(t, "marker", wn.Synsets("big", Adj)[0].Lemmas, []string{"big", "large"})
	eq(t, "galore", wn.Synsets("galore", Adj)[0].Lemmas, []string{"galore", "abounding"})

	// Two base forms reaching the same synset list it once.
	eq(t, "axes", len(wn.Synsets("axes", Noun)), 2)

	// Synonyms: union of lemma names, without the word (any case), base
	// forms kept, underscores kept.
	eq(t, "dogs", wn.Synonyms("dogs", Any), []string{"dog", "domestic_dog", "Canis_familiaris", "frump", "chase"})
	eq(t, "dog noun", wn.Synonyms("dog", Noun), []string{"domestic_dog", "Canis_familiaris", "frump"})
	eq(t, "DOG noun", wn.Synonyms("DOG", Noun), []string{"domestic_dog", "Canis_familiaris", "frump"})
	eq(t, "good adj", wn.Synonyms("good", Adj), []string{"beneficial"})
	eq(t, "better any", wn.Synonyms("better", Any), []string{"good", "beneficial", "well"})
	eq(t, "unknown", wn.Synonyms("zebra", Any), []string(nil))

	src := wn.Source(Noun)
	eq(t, "Source name", src.Name(), "wordnet-n")
	eq(t, "Source", src.Synonyms("dog"), wn.Synonyms("dog", Noun))
	eq(t, "Source any name", wn.Source(Any).Name(), "wordnet")
}

func TestParsePOS(t *testing.T) {
	for s, want := range map[string]POS{"": Any, "any": Any, "n": Noun, "NOUN": Noun, "v": Verb, "a": Adj, "s": Adj, "adjective": Adj, "r": Adv, "adv": Adv} {
		got, err := ParsePOS(s)
		if err != nil || got != want {
			t.Errorf("ParsePOS(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := ParsePOS("x"); err == nil {
		t.Error("ParsePOS(x): no error")
	}
	eq(t, "String", []string{Any.String(), Noun.String(), Verb.String(), Adj.String(), Adv.String()}, []string{"any", "n", "v", "a", "r"})
	for tag, want := range map[string]POS{"NN": Noun, "NNS": Noun, "VBD": Verb, "JJR": Adj, "RB": Adv} {
		if p, ok := PennPOS(tag); !ok || p != want {
			t.Errorf("PennPOS(%q) = %v, %v", tag, p, ok)
		}
	}
	for _, tag := range []string{"", "DT", "IN", "PRP"} {
		if _, ok := PennPOS(tag); ok {
			t.Errorf("PennPOS(%q) ok", tag)
		}
	}
}

func TestDefaultWordNetDir(t *testing.T) {
	t.Setenv("WORDNET_DIR", "")
	eq(t, "default", DefaultWordNetDir(), "/usr/share/wordnet")
	t.Setenv("WORDNET_DIR", "/x/dict")
	eq(t, "env", DefaultWordNetDir(), "/x/dict")
}

func TestOpenWordNetErrors(t *testing.T) {
	_, err := OpenWordNet(filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install") || !strings.Contains(err.Error(), "WORDNET_DIR") {
		t.Errorf("missing directory: %v", err)
	}

	// edit rewrites one file of a fresh dictionary and expects an error
	// naming want (file and line).
	edit := func(name string, change func(string) string, want string) {
		t.Helper()
		dir := tinyWordNet(t)
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, change(string(data)))
		_, err = OpenWordNet(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, want)) {
			t.Errorf("%s edited: error %v, want it to name %s", name, err, want)
		}
	}
	// CRLF line ends shift every offset after the first line: the header has
	// two lines, so the first synset is already off.
	edit("data.verb", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }, "data.verb:3:")
	// A synset type that does not belong in the file.
	edit("data.noun", func(s string) string { return strings.Replace(s, " 03 n 03 dog", " 03 v 03 dog", 1) }, "data.noun:3:")
	// A truncated word list.
	edit("data.adv", func(s string) string { return strings.Replace(s, "well 0 good 0 001", "well 0 good", 1) }, "data.adv:3:")
	// An index entry pointing between synsets.
	edit("index.adv", func(s string) string {
		return strings.Replace(s, fmt.Sprintf("%08d", len(wnHeader)), fmt.Sprintf("%08d", len(wnHeader)+1), 1)
	}, "index.adv:3:")
	// Synset and sense counts that disagree.
	edit("index.verb", func(s string) string { return strings.Replace(s, "chase v 1 1 @ 1 0", "chase v 1 1 @ 2 0", 1) }, "index.verb:3:")
	// An exception line without a base form.
	edit("verb.exc", func(s string) string { return s + "went\n" }, "verb.exc:3:")
	// Missing files are errors too.
	dir := tinyWordNet(t)
	os.Remove(filepath.Join(dir, "adj.exc"))
	if _, err := OpenWordNet(dir); err == nil || !strings.Contains(err.Error(), "adj.exc") {
		t.Errorf("missing adj.exc: %v", err)
	}
}

// realWordNet opens the installed WordNet 3.0, skipping when it is absent.
func realWordNet(t testing.TB) (*WordNet, time.Duration) {
	t.Helper()
	dir := DefaultWordNetDir()
	if _, err := os.Stat(filepath.Join(dir, "index.noun")); err != nil {
		t.Skipf("WordNet not installed in %s (apt-get install -y --no-install-recommends wordnet-base, or set WORDNET_DIR): %v", dir, err)
	}
	start := time.Now()
	wn, err := OpenWordNet(dir)
	if err != nil {
		t.Fatal(err)
	}
	return wn, time.Since(start)
}

// Expected values come from NLTK's documentation (the wn.morphy docstring
// and the WordNet HOWTO) and from reading the 3.0 files themselves.
func TestRealWordNet(t *testing.T) {
	wn, took := realWordNet(t)
	t.Logf("OpenWordNet(%s): %v", wn.Dir(), took)
	if n := len(wn.pos[Noun].synsets); n != 82115 {
		t.Errorf("%d noun synsets, want 82,115", n)
	}
	first := func(forms []string) string {
		if len(forms) == 0 {
			return ""
		}
		return forms[0]
	}
	// NLTK's wn.morphy docstring.
	eq(t, "morphy dogs", first(wn.Morphy("dogs", Any)), "dog")
	eq(t, "morphy churches", first(wn.Morphy("churches", Any)), "church")
	eq(t, "morphy aardwolves", first(wn.Morphy("aardwolves", Any)), "aardwolf")
	eq(t, "morphy abaci", first(wn.Morphy("abaci", Any)), "abacus")
	eq(t, "morphy hardrock adv", wn.Morphy("hardrock", Adv), []string(nil))
	eq(t, "morphy book noun", first(wn.Morphy("book", Noun)), "book")
	eq(t, "morphy book adj", wn.Morphy("book", Adj), []string(nil))
	// From the files: verb.exc "ran run"; adj.exc "better good well", and
	// index.adj has all three.
	eq(t, "morphy dogs noun", wn.Morphy("dogs", Noun), []string{"dog"})
	eq(t, "morphy ran verb", wn.Morphy("ran", Verb), []string{"run"})
	eq(t, "morphy better adj", wn.Morphy("better", Adj), []string{"better", "good", "well"})

	// NLTK HOWTO: wn.synsets('dog') lists dog.n.01, frump.n.01, dog.n.03,
	// cad.n.01, frank.n.02, pawl.n.01, andiron.n.01, chase.v.01.
	var heads []string
	for _, s := range wn.Synsets("dog", Any) {
		heads = append(heads, s.Lemmas[0]+"."+s.POS.String())
	}
	eq(t, "synsets dog", heads, []string{"dog.n", "frump.n", "dog.n", "cad.n", "frank.n", "pawl.n", "andiron.n", "chase.v"})
	eq(t, "dog.n.01 lemmas", wn.Synsets("dog", Noun)[0].Lemmas, []string{"dog", "domestic_dog", "Canis_familiaris"})
	eq(t, "dog.n.01 offset", wn.Synsets("dog", Noun)[0].Offset, int64(2084071))

	// index.adj: good has 21 senses; the second (00106020, "full good") and
	// fifth (00064787, "beneficial good") are satellites.
	good := wn.Synonyms("good", Adj)
	eq(t, "good adj first", first(good), "full")
	for _, w := range []string{"beneficial", "estimable", "honorable", "salutary", "in_effect"} {
		if !containsStr(good, w) {
			t.Errorf("Synonyms(good, Adj) lacks %q: %v", w, good)
		}
	}
	if containsStr(good, "good") {
		t.Error("Synonyms(good) contains good")
	}
	if n := len(wn.Synsets("good", Adj)); n != 21 {
		t.Errorf("good has %d adjective synsets, want 21", n)
	}
}

func BenchmarkOpenWordNet(b *testing.B) {
	realWordNet(b)
	for i := 0; i < b.N; i++ {
		if _, err := OpenWordNet(DefaultWordNetDir()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWordNetSynonyms(b *testing.B) {
	wn, _ := realWordNet(b)
	words := []string{"good", "movies", "running", "better", "terrible", "quickly", "the", "acting"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wn.Synonyms(words[i%len(words)], Any)
	}
}
