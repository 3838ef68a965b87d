package attack

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"
	"unsafe"

	"github.com/textarmor/textarmor/internal/seeded"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/text"
)

// Victim is the model under attack: class probabilities for each id
// sequence. (*nn.Classifier) satisfies it. Predict may be called from
// several goroutines at once.
type Victim interface {
	Predict(seqs [][]int32) [][]float32
}

// Target is a victim together with the text pipeline it reads with.
type Target struct {
	Victim Victim
	Vocab  *text.Vocab
	Tok    text.Tokenizer
	MaxLen int // ids beyond MaxLen are not fed to the model; <= 0 = no limit
	// NoIncremental turns off the fast path that scores candidates close to
	// a cached base sequence incrementally (see IncrementalVictim).
	NoIncremental bool
	// InputGrad, when set, gives for each position of a sequence the L1
	// norm of the gradient of the cross-entropy of a class with respect to
	// that position's embedding: the gradient word-importance order needs
	// it. FromModel sets it.
	InputGrad func(seq []int32, label int) []float64
	// Encode, when set, is the victim's own text pipeline: each candidate
	// is written back into the original text (text.Detokenize) and Encode
	// gives the ids the victim reads, so a transformer sees exactly the
	// perturbed text, re-tokenized into word pieces. Vocab is then an open
	// vocabulary (every substitute has an id) and the incremental fast
	// path is off.
	Encode func(text string) []int32
	// UnkText is what Encode reads for the UNK id that word-importance
	// orders put in a word's place ("[UNK]", which a WordPiece tokenizer
	// keeps as its unknown token).
	UnkText string
	// TextGrad is InputGrad for a victim that reads text (Encode): for each
	// word of the text (as Tok splits it) the L1 norm of the loss gradient
	// with respect to its input embeddings.
	TextGrad func(text string, label int) []float64
	// EncodePair and TextGradPair are Encode and TextGrad for a victim that
	// reads sentence pairs: an example with a Fixed text is attacked
	// through them, its candidates (the second text) read together with
	// the fixed first text. FromModel sets them for a model that reads
	// pairs.
	EncodePair   func(first, second string) []int32
	TextGradPair func(first, second string, label int) []float64
	// Texts, when set, is a victim that reads the texts themselves (a model
	// behind an HTTP endpoint: RemoteModel); Victim and Encode are then
	// unused. Each candidate is written into the original text as for
	// Encode, and Vocab must be an open vocabulary. RunAll stops with
	// Texts.Err once it is set.
	Texts TextVictim
}

// TextVictim is a victim that reads texts, not ids. Err reports its first
// failure (an endpoint that stopped answering, a query budget spent):
// once it is set, what PredictTexts returns means nothing.
type TextVictim interface {
	PredictTexts(texts []string) [][]float32
	Err() error
}

// readsText reports whether the victim reads each candidate as text
// (Encode or Texts) rather than as word ids.
func (t Target) readsText() bool { return t.Encode != nil || t.Texts != nil }

// victimErr is the text victim's failure, if any.
func (t Target) victimErr() error {
	if t.Texts == nil {
		return nil
	}
	return t.Texts.Err()
}

// FromModel makes a Target of a loaded model. A transformer reads each
// candidate as text (Target.Encode: the perturbed text re-tokenized into
// word pieces), over an open word vocabulary of its own, so any substitute
// can be tried, and its input gradients add up over each word's pieces;
// one that reads sentence pairs reads each candidate with its example's
// fixed text (EncodePair).
func FromModel(m *model.Model) Target {
	if m.Pieces != nil {
		t := Target{Victim: m.Net, Vocab: m.Vocab, Tok: m.Tok, Encode: m.Encode, UnkText: m.Pieces.Token(m.Pieces.UnkID()),
			TextGrad: m.WordInputGrad}
		if m.Pairs() {
			t.EncodePair, t.TextGradPair = m.EncodePair, m.WordInputGradPair
		}
		return t
	}
	return Target{Victim: m.Net, Vocab: m.Vocab, Tok: m.Tok, MaxLen: m.MaxLen, InputGrad: m.Net.InputGradL1}
}

// Attack is a goal, a transformation, constraints and a search method.
type Attack struct {
	Goal           Goal
	Transformation Transformation
	Pre            []PreConstraint
	Post           []PostConstraint
	Search         Search
	// QueryBudget stops an example once it has made this many queries (the
	// result is then Failed unless the goal was already reached); 0 = none.
	QueryBudget int
	// OOVAsUnk keeps substitutes outside the model vocabulary: they reach a
	// CNN/LSTM as UNK, as in TextAttack, where the model's tokenizer maps
	// every unknown word to its UNK id. Per position the first such
	// substitute stands for all of them (they are one query to the model)
	// and is the word written into the perturbed text. Off: candidates are
	// restricted to the vocabulary (Jia et al.'s S(w), the FTML protocol).
	OOVAsUnk bool
}

// ResultType is TextAttack's result class name.
type ResultType string

// Result types, spelled as TextAttack's CSV logger writes them.
const (
	Successful ResultType = "Successful"
	Failed     ResultType = "Failed"
	Skipped    ResultType = "Skipped"
)

// Example is one labelled text to attack; Index identifies it in the run
// (its position in the split) and seeds its random numbers.
type Example struct {
	Index int
	Text  string
	Label int
	// Fixed, when set, makes the example a sentence pair: the victim reads
	// the pair (Fixed, Text) and the attack modifies Text only (an NLI
	// hypothesis, MRPC's second sentence), leaving Fixed as it is.
	Fixed string
}

// Result is the outcome of attacking one example.
type Result struct {
	Index           int
	OriginalText    string
	PerturbedText   string
	OriginalOutput  int // predicted class of the original text
	PerturbedOutput int // predicted class of the perturbed text
	GroundTruth     int
	NumQueries      int // distinct inputs the model scored (the query budget counts these)
	// NumRequests counts every input scored for the search, repeats
	// answered from the cache included: TextAttack's num_queries.
	NumRequests  int
	Type         ResultType
	Seconds      float64
	NumWords     int // tokens of the original text
	NumPerturbed int // tokens substituted
	// Note says why an example was skipped or failed early (not in the CSV).
	Note string
	// FinalText is, for a failed attack that changed words, the search's
	// final (partially perturbed) text; "" otherwise. Not in the CSV:
	// TextAttack reports failed attacks unperturbed, but adversarial
	// training (FLAT spec §4.1) trains on this text.
	FinalText string
	// Check says whether a successful attack's written text, read back by
	// the model as a user would feed it, reaches the goal (RunAll sets it;
	// not in the CSV, so resumed rows are checked again).
	Check Check
	// PostChecked[k] and PostPassed[k] count the substituted texts the
	// attack's Post[k] judged and kept (in order; a text another
	// constraint refused first is not judged). Not in the CSV.
	PostChecked, PostPassed []int
	// Fixed is a sentence pair's unmodified first text (Example.Fixed);
	// OriginalText and PerturbedText are its second text. Not in the CSV,
	// whose index column names the example; RunAll sets it on resumed
	// rows too.
	Fixed string
}

// Check is the outcome of reading a successful attack's text back.
type Check int

const (
	Unchecked Check = iota // not a success, or not read back
	Verified               // the written text fools the model as claimed
	Mismatch               // it does not: the attack scored another text (a bug)
)

// Read gives the model's class probabilities for texts as it reads them
// from a file: tokenized, encoded and cut to MaxLen, or through Encode.
func (t Target) Read(texts []string) [][]float32 {
	return t.readPairs(nil, texts)
}

// readPairs is Read of the texts that are the second texts of sentence
// pairs whose first texts are fixed[i] (a single text where fixed is nil
// or fixed[i] is ""); pairs go through EncodePair.
func (t Target) readPairs(fixed, texts []string) [][]float32 {
	if t.Texts != nil { // forPair refuses pairs for a remote victim
		return t.Texts.PredictTexts(texts)
	}
	seqs := make([][]int32, len(texts))
	for i, x := range texts {
		switch {
		case fixed != nil && fixed[i] != "":
			seqs[i] = t.EncodePair(fixed[i], x)
		case t.Encode != nil:
			seqs[i] = t.Encode(x)
		default:
			seqs[i] = t.Vocab.Encode(text.Texts(t.Tok.Tokenize(x)), t.MaxLen)
		}
	}
	return t.Victim.Predict(seqs)
}

// forPair is the target the sentence pair (fixed, candidate) is attacked
// through: its Encode and TextGrad read each candidate second text with
// the fixed first text.
func (t Target) forPair(fixed string) (Target, error) {
	if t.Texts != nil {
		return t, errors.New("attack: sentence pairs cannot be sent to a remote victim (its protocol takes single texts)")
	}
	if t.EncodePair == nil {
		return t, errors.New("attack: a sentence pair needs a victim that reads pairs (Target.EncodePair: a transformer fine-tuned on a pair task)")
	}
	enc, grad := t.EncodePair, t.TextGradPair
	t.Encode = func(s string) []int32 { return enc(fixed, s) }
	t.TextGrad, t.InputGrad = nil, nil
	if grad != nil {
		t.TextGrad = func(s string, label int) []float64 { return grad(fixed, s, label) }
	}
	return t, nil
}

// CheckResults reads each successful result's perturbed text back through
// t and sets its Check: whether the model, reading exactly the written
// text, reaches the goal. It returns the number of mismatches.
func CheckResults(g Goal, t Target, rs []Result) int {
	const batch = 64
	var at []int
	for k, r := range rs {
		if r.Type == Successful {
			at = append(at, k)
		}
	}
	bad := 0
	for lo := 0; lo < len(at); lo += batch {
		part := at[lo:min(lo+batch, len(at))]
		texts, fixed := make([]string, len(part)), make([]string, len(part))
		for j, k := range part {
			texts[j], fixed[j] = rs[k].PerturbedText, rs[k].Fixed
		}
		for j, p := range t.readPairs(fixed, texts) {
			r := &rs[part[j]]
			if g.Achieved(p, r.GroundTruth) {
				r.Check = Verified
			} else {
				r.Check = Mismatch
				bad++
			}
		}
	}
	return bad
}

// PerturbedPct is the share of words changed, in percent.
func (r Result) PerturbedPct() float64 {
	if r.NumWords == 0 {
		return 0
	}
	return 100 * float64(r.NumPerturbed) / float64(r.NumWords)
}

// errBudget is returned by State.Query once the query budget is spent.
var errBudget = errors.New("query budget exhausted")

// Validate reports a missing part.
func (a *Attack) Validate() error {
	switch {
	case a.Goal == nil:
		return errors.New("attack: no goal function")
	case a.Transformation == nil:
		return errors.New("attack: no transformation")
	case a.Search == nil:
		return errors.New("attack: no search method")
	}
	return nil
}

// seedFor mixes the run seed and an example index (SplitMix64 finaliser) so
// that every example has its own independent, reproducible stream.
func seedFor(seed int64, index int) int64 {
	z := uint64(seed)*0x9E3779B97F4A7C15 + uint64(index) + 0x632BE59BD9B4E019
	return int64(seeded.Mix(z) & (1<<63 - 1))
}

// Run attacks one example. The random numbers come from (seed, ex.Index).
func (a *Attack) Run(t Target, ex Example, seed int64) (Result, error) {
	if err := a.Validate(); err != nil {
		return Result{}, err
	}
	if ex.Fixed != "" {
		var err error
		if t, err = t.forPair(ex.Fixed); err != nil {
			return Result{}, err
		}
	}
	if g, ok := a.Search.(Greedy); ok && g.Order == ByGradient {
		if t.InputGrad == nil && (t.Encode == nil || t.TextGrad == nil) {
			return Result{}, errors.New("attack: the gradient word-importance order needs the victim's input gradients (Target.InputGrad; a textarmor model has them)")
		}
	}
	start := time.Now()
	toks := t.Tok.Tokenize(ex.Text)
	words := text.Texts(toks)
	n := len(words)
	if t.MaxLen > 0 && n > t.MaxLen {
		n = t.MaxLen
	}
	orig := t.Vocab.Encode(words[:n], 0)
	s := &State{
		Target: t, attack: a, Words: words, Orig: orig, NumWords: len(words), Label: ex.Label, text: ex.Text, toks: toks,
		Rng: rand.New(rand.NewSource(seedFor(seed, ex.Index))), cache: map[string]Scored{},
	}
	res := Result{Index: ex.Index, OriginalText: ex.Text, PerturbedText: ex.Text, GroundTruth: ex.Label, NumWords: len(words), Fixed: ex.Fixed}
	finish := func() (Result, error) {
		res.NumQueries, res.NumRequests = s.Queries, s.Requests
		res.PostChecked, res.PostPassed = s.postChecked, s.postPassed
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	o, err := s.Query([][]int32{orig})
	if err != nil {
		res.Type, res.Note = Failed, err.Error()
		return finish()
	}
	s.Initial = o[0]
	res.OriginalOutput, res.PerturbedOutput = o[0].Pred, o[0].Pred
	if o[0].Pred != ex.Label {
		res.Type, res.Note = Skipped, "misclassified before the attack"
		return finish()
	}
	if a.Goal.Achieved(o[0].Probs, ex.Label) {
		res.Type, res.Note = Skipped, "goal already reached"
		return finish()
	}
	s.buildCandidates()
	attackable := 0
	for i := range s.Cands {
		if len(s.Cands[i]) > 0 {
			attackable++
		}
	}
	if attackable == 0 {
		// The model is right and stays right: a failed attack, not a skip,
		// so accuracy under attack counts it as correct.
		res.Type, res.Note = Failed, "no word has an allowed substitute"
		return finish()
	}
	best := a.Search.Search(s)
	if best.Seq == nil {
		best = s.Initial
	}
	res.PerturbedOutput = best.Pred
	res.NumPerturbed = s.Modified(best.Seq)
	if best.Achieved {
		res.Type = Successful
		res.PerturbedText = detokenizeSeq(ex.Text, toks, s, best.Seq)
	} else {
		// A failed attack reports the original text and prediction.
		if res.NumPerturbed > 0 {
			res.FinalText = detokenizeSeq(ex.Text, toks, s, best.Seq)
		}
		res.Type, res.NumPerturbed, res.PerturbedOutput = Failed, 0, s.Initial.Pred
		if s.exhausted {
			res.Note = errBudget.Error()
		}
	}
	return finish()
}

// detokenizeSeq writes seq's substitutions into the original text.
func detokenizeSeq(orig string, toks []text.Token, s *State, seq []int32) string {
	replace := map[int]string{}
	for i, id := range seq {
		if id != s.Orig[i] {
			replace[i] = s.word(i, id)
		}
	}
	return text.Detokenize(orig, toks, replace)
}

// Scored is a candidate id sequence with the model's view of it.
type Scored struct {
	Seq      []int32
	Probs    []float32
	Pred     int
	Score    float64 // the goal's score: higher is closer to success
	Achieved bool    // goal reached and every final constraint holds
}

// State is one example under attack, shared by the search methods.
type State struct {
	Target   Target
	attack   *Attack
	Words    []string // all tokens of the original text
	Orig     []int32  // ids the model sees (the first MaxLen words)
	NumWords int      // len(Words): the denominator of modification rates
	Label    int      // ground truth
	Initial  Scored   // the original text's outputs
	// Cands[i] are the ids of the allowed substitutes of word i (from the
	// transformation, restricted to the vocabulary and to positions the
	// static pre-constraints allow).
	Cands [][]int32
	Rng   *rand.Rand
	// Queries counts the distinct inputs the model scored; Requests every
	// input scored for the search, repeats (cache hits) included, as
	// TextAttack's num_queries counts them.
	Queries   int
	Requests  int
	cache     map[string]Scored
	exhausted bool
	inc       *nn.Incremental // the fast path's base, when the victim has one
	// unkSub[i] is the out-of-vocabulary word that UNK stands for at
	// position i (Attack.OOVAsUnk); "" when there is none.
	unkSub []string
	// text and toks are the original text and its tokens, from which
	// Target.Encode's candidates are written.
	text string
	toks []text.Token
	// phrases are the substitutes the model's tokenizer reads as other than
	// one token ("ex-husband" as ex, -, husband): phrase k has the id
	// phraseBase+k in candidate sequences and is expanded into the ids the
	// model reads before scoring, so the score is that of the written text.
	phrases    []phrase
	phraseBase int32
	phraseID   map[string]int32
	// postChecked[k] and postPassed[k] count the substituted texts Post[k]
	// judged and kept.
	postChecked, postPassed []int
}

// phrase is a substitute read as several tokens (or none).
type phrase struct {
	word string
	ids  []int32
}

// victimPredict is Target.Victim.Predict on word-id sequences, through
// Target.Encode when the victim reads text its own way, or the texts
// themselves to Target.Texts.
func (s *State) victimPredict(seqs [][]int32) [][]float32 {
	if s.Target.Texts != nil {
		texts := make([]string, len(seqs))
		for i, q := range seqs {
			texts[i] = s.textOf(q)
		}
		return s.Target.Texts.PredictTexts(texts)
	}
	if s.Target.Encode == nil {
		if s.phrases != nil {
			exp := make([][]int32, len(seqs))
			for i, q := range seqs {
				exp[i] = s.expand(q)
			}
			seqs = exp
		}
		return s.Target.Victim.Predict(seqs)
	}
	enc := make([][]int32, len(seqs))
	for i, q := range seqs {
		enc[i] = s.Target.Encode(s.textOf(q))
	}
	return s.Target.Victim.Predict(enc)
}

// textOf writes a candidate into the original text for Target.Encode (or
// Target.Texts): its
// substitutions, UNK (with no out-of-vocabulary word behind it) as
// Target.UnkText, and a sequence one shorter than the original as that
// original with one word deleted (the deletion word-importance order).
func (s *State) textOf(seq []int32) string {
	replace := map[int]string{}
	if len(seq) == len(s.Orig)-1 {
		i := 0
		for i < len(seq) && seq[i] == s.Orig[i] {
			i++
		}
		replace[i] = ""
		seq = append(append(seq[:i:i], s.Orig[i]), seq[i:]...)
	}
	for i, id := range seq {
		if id == s.Orig[i] {
			continue
		}
		if id == text.UnkID && (s.unkSub == nil || s.unkSub[i] == "") {
			replace[i] = s.Target.UnkText
		} else {
			replace[i] = s.word(i, id)
		}
	}
	return text.Detokenize(s.text, s.toks, replace)
}

// key is a sequence's bytes as a map key.
func key(seq []int32) string {
	if len(seq) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&seq[0])), len(seq)*4))
}

// Exhausted reports whether the query budget is spent.
func (s *State) Exhausted() bool { return s.exhausted }

// Query scores sequences with one Predict call for those not cached. Each
// distinct uncached sequence is one query. When the budget would be
// exceeded, the sequences that fit are scored, the rest are returned with
// nil Probs, and the error is errBudget.
func (s *State) Query(seqs [][]int32) ([]Scored, error) {
	todo, err := s.withinBudget(s.uncached(seqs, map[string]bool{}), 0)
	if len(todo) > 0 {
		s.store(todo, s.predict(todo))
	}
	return s.lookup(seqs), err
}

// uncached returns the distinct sequences of seqs that are neither cached
// nor in pending, and adds them to pending.
func (s *State) uncached(seqs [][]int32, pending map[string]bool) [][]int32 {
	var todo [][]int32
	for _, q := range seqs {
		k := key(q)
		if _, ok := s.cache[k]; ok || pending[k] {
			continue
		}
		pending[k] = true
		todo = append(todo, q)
	}
	return todo
}

// withinBudget cuts todo to what the query budget leaves after reserved
// more queries, marking the state exhausted (errBudget) when it cuts.
func (s *State) withinBudget(todo [][]int32, reserved int) ([][]int32, error) {
	if b := s.attack.QueryBudget; b > 0 && s.Queries+reserved+len(todo) > b {
		s.exhausted = true
		return todo[:max(b-s.Queries-reserved, 0)], errBudget
	}
	return todo, nil
}

// store caches the scores of newly predicted sequences, one query each.
func (s *State) store(seqs [][]int32, probs [][]float32) {
	s.Queries += len(seqs)
	for j, q := range seqs {
		s.cache[key(q)] = s.score(q, probs[j])
	}
}

// lookup returns the cached scores of seqs, each one scored input of the
// search (Requests, repeats included); one never scored (cut by the
// budget) has nil Probs and a score below any real one.
func (s *State) lookup(seqs [][]int32) []Scored {
	out := make([]Scored, len(seqs))
	for i, q := range seqs {
		if r, ok := s.cache[key(q)]; ok {
			out[i] = r
			s.Requests++
		} else {
			out[i] = Scored{Seq: q, Score: -1e9}
		}
	}
	return out
}

func (s *State) score(seq []int32, p []float32) Scored {
	g := s.attack.Goal
	pred := nn.Argmax(p)
	sc := Scored{Seq: seq, Probs: p, Pred: pred, Score: g.Score(p, s.Label)}
	sc.Achieved = g.Achieved(p, s.Label) && s.finalOK(seq)
	return sc
}

// finalOK checks the constraints that also bound the final result (the
// maximum modification rate).
func (s *State) finalOK(seq []int32) bool {
	for _, c := range s.attack.Pre {
		if f, ok := c.(FinalConstraint); ok && !f.Final(s, seq) {
			return false
		}
	}
	return true
}

// Modified counts the positions where seq differs from the original.
func (s *State) Modified(seq []int32) int {
	n := 0
	for i, id := range seq {
		if id != s.Orig[i] {
			n++
		}
	}
	return n
}

// buildCandidates asks the transformation for every word's substitutes and
// keeps the in-vocabulary ones at positions the constraints allow on the
// original text.
func (s *State) buildCandidates() {
	s.Cands = make([][]int32, len(s.Orig))
	s.unkSub = make([]string, len(s.Orig))
	for i := range s.Orig {
		if !s.allowed(s.Orig, i) {
			continue
		}
		seen := map[int32]bool{s.Orig[i]: true, text.PadID: true, text.UnkID: !s.attack.OOVAsUnk}
		for _, w := range s.attack.Transformation.Substitutes(s.Words, i) {
			id := s.substituteID(w)
			if !seen[id] {
				seen[id] = true
				s.Cands[i] = append(s.Cands[i], id)
				if id == text.UnkID {
					s.unkSub[i] = w
				}
			}
		}
	}
}

// substituteID is the id a substitute has in candidate sequences: the id
// of the one token the model's tokenizer reads it as, or, when it reads it
// as several (or none), a phrase id under OOVAsUnk and UNK (dropped)
// otherwise, since such a substitute is not in the vocabulary. A victim
// that reads text (Encode) re-tokenizes every candidate anyway and takes
// the word's own id.
func (s *State) substituteID(w string) int32 {
	v := s.Target.Vocab
	if s.Target.readsText() {
		return v.ID(w)
	}
	toks := s.Target.Tok.Tokenize(w)
	if len(toks) == 1 {
		return v.ID(toks[0].Text)
	}
	if !s.attack.OOVAsUnk {
		return text.UnkID
	}
	if id, ok := s.phraseID[w]; ok {
		return id
	}
	if s.phraseID == nil {
		s.phraseID, s.phraseBase = map[string]int32{}, int32(v.Len())
	}
	id := s.phraseBase + int32(len(s.phrases))
	s.phrases = append(s.phrases, phrase{word: w, ids: v.Encode(text.Texts(toks), 0)})
	s.phraseID[w] = id
	return id
}

// expand writes a candidate's phrase ids as the ids the model reads, cut
// to MaxLen as the model cuts the written text; sequences without phrases
// are returned as they are.
func (s *State) expand(seq []int32) []int32 {
	if !s.hasPhrase(seq) {
		return seq
	}
	out := make([]int32, 0, len(seq)+8)
	for _, id := range seq {
		if id >= s.phraseBase {
			out = append(out, s.phrases[id-s.phraseBase].ids...)
		} else {
			out = append(out, id)
		}
	}
	if m := s.Target.MaxLen; m > 0 && len(out) > m {
		out = out[:m]
	}
	return out
}

// anyPhrase reports whether a sequence of seqs holds a phrase id.
func (s *State) anyPhrase(seqs [][]int32) bool {
	return s.phrases != nil && slices.ContainsFunc(seqs, s.hasPhrase)
}

// hasPhrase reports whether seq holds a phrase id.
func (s *State) hasPhrase(seq []int32) bool {
	if s.phrases == nil {
		return false
	}
	for _, id := range seq {
		if id >= s.phraseBase {
			return true
		}
	}
	return false
}

// allowed applies the pre-transformation constraints to position i of seq.
func (s *State) allowed(seq []int32, i int) bool {
	for _, c := range s.attack.Pre {
		if !c.Allow(s, seq, i) {
			return false
		}
	}
	return true
}

// Substitutes returns the sequences obtained by replacing position i of cur
// with each allowed substitute (nil when the position may not change), after
// the post-transformation constraints.
func (s *State) Substitutes(cur []int32, i int) [][]int32 {
	if len(s.Cands[i]) == 0 || !s.allowed(cur, i) {
		return nil
	}
	var out [][]int32
	for _, id := range s.Cands[i] {
		if id == cur[i] {
			continue
		}
		next := append([]int32(nil), cur...)
		next[i] = id
		if s.postOK(cur, next, i) {
			out = append(out, next)
		}
	}
	return s.selectCandidates(cur, i, out)
}

// selectCandidates applies the constraints that judge a position's
// substitutes together (CandidateSelector) to the survivors of Check.
func (s *State) selectCandidates(cur []int32, i int, out [][]int32) [][]int32 {
	for _, c := range s.attack.Post {
		sel, ok := c.(CandidateSelector)
		if !ok || len(out) == 0 {
			continue
		}
		subs := make([]string, len(out))
		for k, q := range out {
			subs[k] = s.word(i, q[i])
		}
		keep := sel.Select(s.Words, s.WordsOf(cur), i, subs)
		kept := out[:0:0]
		for k, q := range out {
			if keep[k] {
				kept = append(kept, q)
			}
		}
		out = kept
	}
	return out
}

// Allowed reports whether position i of cur may be changed now.
func (s *State) Allowed(cur []int32, i int) bool {
	return len(s.Cands[i]) > 0 && s.allowed(cur, i)
}

// word is the word that id stands for at position i.
func (s *State) word(i int, id int32) string {
	if s.phrases != nil && id >= s.phraseBase {
		return s.phrases[id-s.phraseBase].word
	}
	if id == text.UnkID && s.unkSub != nil && s.unkSub[i] != "" {
		return s.unkSub[i]
	}
	return s.Target.Vocab.Word(id)
}

// WordsOf maps a sequence back to words (all tokens, including those past
// MaxLen, which never change).
func (s *State) WordsOf(seq []int32) []string {
	w := append([]string(nil), s.Words...)
	for i, id := range seq {
		if id != s.Orig[i] {
			w[i] = s.word(i, id)
		}
	}
	return w
}

func (s *State) postOK(prev, next []int32, i int) bool {
	if len(s.attack.Post) == 0 {
		return true
	}
	if s.postChecked == nil {
		s.postChecked, s.postPassed = make([]int, len(s.attack.Post)), make([]int, len(s.attack.Post))
	}
	pw, nw := s.WordsOf(prev), s.WordsOf(next)
	for k, c := range s.attack.Post {
		s.postChecked[k]++
		if !c.Check(s.Words, pw, nw, i) {
			return false
		}
		s.postPassed[k]++
	}
	return true
}

// describe names the parts of an attack, for logs.
func (a *Attack) describe() string {
	var pre, post []string
	for _, c := range a.Pre {
		pre = append(pre, c.Name())
	}
	for _, c := range a.Post {
		post = append(post, c.Name())
	}
	oov := "vocabulary-only"
	if a.OOVAsUnk {
		oov = "as-unk"
	}
	return fmt.Sprintf("goal=%s transformation=%s pre=%v post=%v search=%s budget=%d oov=%s",
		a.Goal.Name(), a.Transformation.Name(), pre, post, a.Search.Name(), a.QueryBudget, oov)
}
