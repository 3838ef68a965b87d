package checkpoint

// Reading and writing Hugging Face BERT checkpoint directories.
//
// LoadHF reads a directory as transformers' save_pretrained writes it for a
// BERT-architecture model (config.json and model.safetensors, or shards
// listed in model.safetensors.index.json), plus the tokenizer files and,
// for a sentence-transformers model, its pooling setup. Weights are only
// ever read from safetensors: pickled PyTorch files are refused, since
// unpickling can run arbitrary code. Every name and shape is checked
// against config.json from the headers alone before any tensor is
// allocated or any data read.
//
// Tensors are returned under canonical names: the Hugging Face names
// without the "bert." prefix (embeddings.*, encoder.layer.N.*, pooler.*),
// with cls.predictions.* (the masked-LM head) and classifier.* (the
// sequence-classification head) as they are, in Hugging Face layout
// (a Linear weight is [out, in]). Old LayerNorm.gamma/beta names become
// LayerNorm.weight/bias.
//
// SaveHF writes the reverse: a directory transformers loads as
// BertForSequenceClassification (or BertModel, without a classifier).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/tensor"
)

// HFCheckpoint is a Hugging Face BERT checkpoint in memory.
type HFCheckpoint struct {
	Config BertConfig
	// Tensors holds the weights under canonical names (see the package
	// notes in hf.go): BertShapes' tensors, and those of the pooler and
	// heads present. LoadHF stores the masked-LM output bias as
	// cls.predictions.bias even when the file only has the tied
	// cls.predictions.decoder.bias.
	Tensors map[string]*tensor.Tensor
	// HasPooler, HasMLMHead and HasClassifier say which optional groups
	// Tensors holds; MLMDecoderTied that the MLM head has no decoder
	// weight of its own and uses embeddings.word_embeddings.weight.
	HasPooler, HasMLMHead, HasClassifier, MLMDecoderTied bool
	// Labels are the classifier's labels by class index: config.json's
	// id2label, or transformers' default LABEL_0, LABEL_1, ... without
	// one. Nil when there is no classifier.
	Labels []string
	// Vocab is vocab.txt (nil when absent), index = token id.
	Vocab []string
	// DoLowerCase is tokenizer_config.json's do_lower_case (true, the
	// BertTokenizer default, when absent); ModelMaxLength its
	// model_max_length, 0 when absent or unbounded.
	DoLowerCase    bool
	ModelMaxLength int
	// SentenceTransformers describes the sentence-transformers setup when
	// the directory has a modules.json; nil otherwise.
	SentenceTransformers *SentenceTransformersInfo
	// Warnings lists what LoadHF ignored: tensors that are not part of a
	// BERT checkpoint, modules it does not apply, and the like.
	Warnings []string
}

// SentenceTransformersInfo is what a sentence-transformers model directory
// adds to the transformer: how token vectors become a sentence vector.
type SentenceTransformersInfo struct {
	// Pooling is "cls", "mean", "max" or "mean_sqrt_len"; "" when
	// modules.json has no Pooling module.
	Pooling string
	// Normalize is true when a Normalize module (L2, after pooling) follows.
	Normalize bool
	// MaxSeqLength is sentence_bert_config.json's max_seq_length: inputs
	// are truncated to this many tokens. 0 when not given.
	MaxSeqLength int
	// DoLowerCase is sentence_bert_config.json's do_lower_case: whether
	// sentence-transformers lowercases the text itself (on top of what
	// the tokenizer does).
	DoLowerCase bool
	// Modules are the module types of modules.json, in order.
	Modules []string
}

// tensorDesc is what checkBert needs to know of a tensor.
type tensorDesc struct {
	dtype string
	shape []int
}

// bertLayout is the outcome of checkBert.
type bertLayout struct {
	pooler, mlm, mlmDecoder, classifier bool
	numLabels                           int
	load                                map[string]bool // canonical names to load
	extras                              []string        // not part of a BERT checkpoint, sorted
}

// checkBert checks the tensors descs (by canonical name) against cfg:
// every required tensor present with its shape and a convertible dtype,
// optional groups complete, and the total size bounded. where(name)
// gives the file holding a tensor (or that should) and the tensor's name
// there, for errors. It reports the first problems found, in order.
func checkBert(cfg BertConfig, descs map[string]tensorDesc, where func(string) (file, stored string)) (*bertLayout, error) {
	lay := &bertLayout{load: map[string]bool{}}
	type problem struct{ file, text string }
	var problems []problem
	report := func(name, format string, args ...any) {
		file, stored := where(name)
		problems = append(problems, problem{file, fmt.Sprintf("tensor %q ", stored) + fmt.Sprintf(format, args...)})
	}
	want := func(name string, shape []int, required bool) bool {
		d, ok := descs[name]
		if !ok {
			if required {
				report(name, "is missing")
			}
			return false
		}
		if !slices.Equal(d.shape, shape) {
			report(name, "has shape %v, want %v per %s", d.shape, shape, ConfigFile)
			return false
		}
		if dtypeSize[d.dtype] == 0 {
			report(name, "has dtype %s; supported: %s", d.dtype, convertibleDtypes)
			return false
		}
		lay.load[name] = true
		return true
	}
	checkAll := func(shapes map[string][]int, required bool) {
		for _, n := range slices.Sorted(maps.Keys(shapes)) {
			want(n, shapes[n], required)
		}
	}
	known := map[string]bool{}

	req := BertShapes(cfg)
	checkAll(req, true)
	for n := range req {
		known[n] = true
	}

	pool := BertPoolerShapes(cfg)
	if _, w := descs[poolerWeight]; w || hasKey(descs, poolerBias) {
		lay.pooler = true
		checkAll(pool, true)
	}
	for n := range pool {
		known[n] = true
	}

	if hasKey(descs, classifierWeight) || hasKey(descs, classifierBias) {
		lay.classifier = true
		c := -1
		if d, ok := descs[classifierWeight]; ok && len(d.shape) == 2 {
			c = d.shape[0]
		} else if d, ok := descs[classifierBias]; ok && len(d.shape) == 1 {
			c = d.shape[0]
		}
		switch {
		case c < 0:
			report(classifierWeight, "has no usable shape: want [num_labels, hidden_size %d]", cfg.HiddenSize)
		case c == 0 || c > maxNumLabels:
			report(classifierWeight, "has %d labels; want 1 to %d", c, maxNumLabels)
		default:
			lay.numLabels = c
			checkAll(BertClassifierShapes(cfg, c), true)
		}
	}
	known[classifierWeight], known[classifierBias] = true, true

	mlm := BertMLMHeadShapes(cfg)
	for n := range descs {
		if _, ok := mlm[n]; ok {
			lay.mlm = true
		}
	}
	if lay.mlm {
		for _, n := range []string{mlmTransformW, mlmTransformB, mlmTransformLNW, mlmTransformLNB} {
			want(n, mlm[n], true)
		}
		if !hasKey(descs, mlmBias) && !hasKey(descs, mlmDecoderBias) {
			report(mlmBias, "is missing (nor is there a %s)", mlmDecoderBias)
		}
		want(mlmBias, mlm[mlmBias], false)
		want(mlmDecoderBias, mlm[mlmDecoderBias], false)
		lay.mlmDecoder = want(mlmDecoderWeight, mlm[mlmDecoderWeight], false)
	}
	for n := range mlm {
		known[n] = true
	}

	for n := range descs {
		if !known[n] && !bertBuffers[n] {
			lay.extras = append(lay.extras, n)
		}
	}
	sort.Strings(lay.extras)

	if len(problems) > 0 {
		// Name each file once: "FILE: tensor A ...; tensor B ...".
		var msg strings.Builder
		for i, p := range problems[:min(len(problems), 3)] {
			if i > 0 {
				msg.WriteString("; ")
			}
			if p.file != "" && (i == 0 || p.file != problems[i-1].file) {
				msg.WriteString(p.file + ": ")
			}
			msg.WriteString(p.text)
		}
		if len(problems) > 3 {
			fmt.Fprintf(&msg, "; and %d more", len(problems)-3)
		}
		return nil, errors.New(msg.String())
	}
	// Every shape now matches cfg (bounded by Validate) except the
	// classifier's and MLM head's; bound the total anyway.
	total := 0
	for n := range lay.load {
		total += tensor.Numel(descs[n].shape)
	}
	if total > 2*maxBertParams {
		return nil, fmt.Errorf("%d parameters in all, more than this reader accepts", total)
	}
	return lay, nil
}

func hasKey[V any](m map[string]V, k string) bool { _, ok := m[k]; return ok }

// canonicalNames maps the tensor names a checkpoint stores to canonical
// names (canonical → stored). A "bert." prefix on the base model's tensors
// is stripped; it must then be on all of them. LayerNorm.gamma/beta become
// LayerNorm.weight/bias, and a lone cls.predictions.decoder.bias becomes
// cls.predictions.bias. prefixed reports whether the prefix was used.
func canonicalNames(stored []string) (canon map[string]string, prefixed bool, err error) {
	stored = slices.Sorted(slices.Values(stored))
	var example string
	for _, n := range stored {
		if strings.HasPrefix(n, bertPrefix) && isBaseName(n[len(bertPrefix):]) {
			prefixed, example = true, n
			break
		}
	}
	canon = map[string]string{}
	for _, n := range stored {
		c := n
		if prefixed {
			if strings.HasPrefix(n, bertPrefix) && isBaseName(n[len(bertPrefix):]) {
				c = n[len(bertPrefix):]
			} else if isBaseName(n) {
				return nil, false, fmt.Errorf("tensor %q has no %q prefix, but %q has: the checkpoint mixes two naming schemes", n, bertPrefix, example)
			}
		}
		if s, ok := strings.CutSuffix(c, "LayerNorm.gamma"); ok {
			c = s + "LayerNorm.weight"
		} else if s, ok := strings.CutSuffix(c, "LayerNorm.beta"); ok {
			c = s + "LayerNorm.bias"
		}
		if prev, dup := canon[c]; dup {
			return nil, false, fmt.Errorf("tensors %q and %q are both %q", prev, n, c)
		}
		canon[c] = n
	}
	if s, ok := canon[mlmDecoderBias]; ok && !hasKey(canon, mlmBias) {
		canon[mlmBias] = s
		delete(canon, mlmDecoderBias)
	}
	return canon, prefixed, nil
}

// hfShard is one open safetensors file of a checkpoint, its header read.
type hfShard struct {
	path string
	f    *os.File
	hdr  *stHeader
}

// hfWeights are a checkpoint's weight files.
type hfWeights struct {
	label  string              // the file to name for a missing tensor
	shards []*hfShard          // file order
	of     map[string]*hfShard // stored tensor name → its file
}

func (w *hfWeights) close() {
	for _, s := range w.shards {
		s.f.Close()
	}
}

// openShard opens a safetensors file and reads its header.
func openShard(path string) (*hfShard, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	hdr, err := readSTHeader(f, size, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &hfShard{path: path, f: f, hdr: hdr}, nil
}

// pickleExts are file extensions of pickled (PyTorch) weights.
var pickleExts = []string{".bin", ".pt", ".pth", ".ckpt", ".pkl"}

var pyIdent = regexp.MustCompile(`^Bert[A-Za-z]*$`)

// openHFWeights finds and opens dir's weights, reading their headers only.
func openHFWeights(dir string, cfg BertConfig) (_ *hfWeights, err error) {
	w := &hfWeights{of: map[string]*hfShard{}}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	add := func(s *hfShard) error {
		w.shards = append(w.shards, s)
		for _, n := range s.hdr.names {
			if prev, dup := w.of[n]; dup {
				return fmt.Errorf("%s: tensor %q is in both %s and %s", w.label, n, prev.path, s.path)
			}
			w.of[n] = s
		}
		return nil
	}

	single := filepath.Join(dir, WeightsFile)
	if _, err := os.Stat(single); err == nil {
		s, err := openShard(single)
		if err != nil {
			return nil, err
		}
		w.label = single
		return w, add(s)
	}

	ipath := filepath.Join(dir, HFIndexFile)
	if _, err := os.Stat(ipath); err == nil {
		w.label = ipath
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := readJSONFile(ipath, &idx); err != nil {
			return nil, err
		}
		if len(idx.WeightMap) == 0 {
			return nil, fmt.Errorf("%s: weight_map is missing or empty", ipath)
		}
		var files []string
		for n, f := range idx.WeightMap {
			if f != filepath.Base(f) || !filepath.IsLocal(f) || !strings.HasSuffix(f, ".safetensors") {
				return nil, fmt.Errorf("%s: weight_map puts tensor %q in %q, which is not a .safetensors file of the directory", ipath, n, f)
			}
			if !slices.Contains(files, f) {
				files = append(files, f)
			}
		}
		sort.Strings(files)
		for _, f := range files {
			s, err := openShard(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			if err := add(s); err != nil {
				return nil, err
			}
		}
		for _, n := range slices.Sorted(maps.Keys(idx.WeightMap)) {
			if s := w.of[n]; s == nil || filepath.Base(s.path) != idx.WeightMap[n] {
				return nil, fmt.Errorf("%s: weight_map puts tensor %q in %s, which does not hold it", ipath, n, idx.WeightMap[n])
			}
		}
		return w, nil
	}

	// No safetensors weights: say what there is instead.
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var pickles, other, st []string
	for _, e := range ents {
		n := e.Name()
		switch {
		case slices.Contains(pickleExts, filepath.Ext(n)):
			pickles = append(pickles, n)
		case n == "tf_model.h5" || n == "flax_model.msgpack":
			other = append(other, n)
		case strings.HasSuffix(n, ".safetensors"):
			st = append(st, n)
		}
	}
	switch {
	case len(st) > 0:
		return nil, fmt.Errorf("%s: no %s (nor %s); found %s, but only those two are read",
			dir, WeightsFile, HFIndexFile, strings.Join(st, ", "))
	case len(pickles) > 0 || len(other) > 0:
		class := "AutoModel"
		if len(cfg.Architectures) > 0 && pyIdent.MatchString(cfg.Architectures[0]) {
			class = cfg.Architectures[0]
		}
		d, where := dir, ""
		if strings.ContainsAny(d, "'\"\\$`") {
			d, where = "DIR", " (DIR being the model directory)"
		}
		what := "PyTorch pickle weights, which textarmor never loads: unpickling can execute arbitrary code"
		arg := ""
		if len(pickles) == 0 {
			what = "TensorFlow/Flax weights, which textarmor does not read"
			arg = ", from_tf=True"
			if slices.Contains(other, "flax_model.msgpack") && !slices.Contains(other, "tf_model.h5") {
				arg = ", from_flax=True"
			}
		}
		return nil, fmt.Errorf("%s: no %s; only %s (%s). Convert them to safetensors%s with:\n"+
			"  python -c \"from transformers import %s as M; M.from_pretrained('%s'%s).save_pretrained('%s', safe_serialization=True)\"",
			dir, WeightsFile, strings.Join(append(pickles, other...), ", "), what, where, class, d, arg, d)
	default:
		return nil, fmt.Errorf("%s: no weights: want %s or %s", dir, WeightsFile, HFIndexFile)
	}
}

// LoadHF reads the Hugging Face BERT checkpoint directory dir (see the
// notes at the top of hf.go). It reads config.json, the small JSON and
// tokenizer files, then the safetensors headers; it checks every tensor's
// presence, shape and dtype against config.json before reading any
// tensor data. Tensors that are not part of a BERT checkpoint are listed
// in Warnings (known buffers such as embeddings.position_ids are skipped
// silently) and not loaded. Errors name the file at fault.
func LoadHF(dir string) (*HFCheckpoint, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	cpath := filepath.Join(dir, ConfigFile)
	cfg, err := ReadBertConfig(cpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingConfigError(dir, cpath, err)
	}
	if err != nil {
		return nil, err
	}
	h := &HFCheckpoint{Config: cfg}
	if h.SentenceTransformers, h.Warnings, err = readSentenceTransformers(dir, cfg); err != nil {
		return nil, err
	}
	if err := readHFTokenizer(dir, h); err != nil {
		return nil, err
	}

	w, err := openHFWeights(dir, cfg)
	if err != nil {
		return nil, err
	}
	defer w.close()
	stored := make([]string, 0, len(w.of))
	for n := range w.of {
		stored = append(stored, n)
	}
	canon, prefixed, err := canonicalNames(stored)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.label, err)
	}
	descs := make(map[string]tensorDesc, len(canon))
	for c, s := range canon {
		e := w.of[s].hdr.entries[s]
		descs[c] = tensorDesc{dtype: e.Dtype, shape: intShape(e.Shape)}
	}
	where := func(c string) (string, string) {
		if s, ok := canon[c]; ok {
			return w.of[s].path, s
		}
		if prefixed && isBaseName(c) {
			c = bertPrefix + c
		}
		return w.label, c
	}
	describe := func(c string) string {
		file, s := where(c)
		return fmt.Sprintf("%s: tensor %q", file, s)
	}
	lay, err := checkBert(cfg, descs, where)
	if err != nil {
		return nil, err
	}
	for _, c := range lay.extras {
		h.Warnings = append(h.Warnings, describe(c)+" is not part of a BERT checkpoint; ignored")
	}
	if lay.classifier {
		labels, _ := cfg.labels() // validated by ReadBertConfig
		switch {
		case labels == nil:
			labels = make([]string, lay.numLabels)
			for i := range labels {
				labels[i] = "LABEL_" + strconv.Itoa(i)
			}
		case len(labels) != lay.numLabels:
			return nil, fmt.Errorf("%s: id2label has %d labels, but %s has %d rows", cpath, len(labels), describe(classifierWeight), lay.numLabels)
		}
		h.Labels = labels
	}

	// Only now, all names and shapes being right, check the files'
	// layouts and read the data.
	for _, s := range w.shards {
		if err := s.hdr.checkLayout(); err != nil {
			return nil, err
		}
	}
	storedToCanon := map[string]string{}
	for c := range lay.load {
		storedToCanon[canon[c]] = c
	}
	h.Tensors = make(map[string]*tensor.Tensor, len(lay.load))
	for _, s := range w.shards {
		got, err := s.hdr.readData(s.f, func(n string) bool { return hasKey(storedToCanon, n) })
		if err != nil {
			return nil, err
		}
		for _, n := range slices.Sorted(maps.Keys(got)) {
			if err := finiteTensor(s.path, n, got[n]); err != nil {
				return nil, err
			}
			h.Tensors[storedToCanon[n]] = got[n]
		}
	}
	h.HasPooler, h.HasMLMHead, h.HasClassifier = lay.pooler, lay.mlm, lay.classifier
	h.MLMDecoderTied = lay.mlm && !lay.mlmDecoder
	return h, nil
}

// missingConfigError explains a missing config.json, pointing into the
// sentence-transformers module that holds the transformer if there is one.
func missingConfigError(dir, cpath string, err error) error {
	var mods []stModule
	if readJSONFile(filepath.Join(dir, STModulesFile), &mods) == nil {
		for _, m := range mods {
			// "Transformer" today; "BERT" and the like in old versions.
			kind := strings.ToUpper(m.Type[strings.LastIndexByte(m.Type, '.')+1:])
			if (kind == "TRANSFORMER" || strings.Contains(kind, "BERT")) && m.Path != "" && filepath.IsLocal(m.Path) {
				if _, serr := os.Stat(filepath.Join(dir, m.Path, ConfigFile)); serr == nil {
					return fmt.Errorf("%s: missing; per %s the transformer is in %s: load that directory",
						cpath, STModulesFile, filepath.Join(dir, m.Path))
				}
			}
		}
	}
	return fmt.Errorf("%s: missing; a Hugging Face model directory needs one (%w)", cpath, err)
}

type stModule struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// readSentenceTransformers reads modules.json and the files it points to;
// nil when there is no modules.json.
func readSentenceTransformers(dir string, cfg BertConfig) (*SentenceTransformersInfo, []string, error) {
	mpath := filepath.Join(dir, STModulesFile)
	var mods []stModule
	if err := readJSONFile(mpath, &mods); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	info := &SentenceTransformersInfo{}
	var warnings []string
	for _, m := range mods {
		info.Modules = append(info.Modules, m.Type)
		kind := m.Type[strings.LastIndexByte(m.Type, '.')+1:]
		switch kind {
		case "Transformer":
			if m.Path != "" && m.Path != "." && m.Path != "./" {
				return nil, nil, fmt.Errorf("%s: the Transformer module is in %q, but LoadHF reads the transformer from %s itself",
					mpath, m.Path, dir)
			}
		case "Pooling":
			if !filepath.IsLocal(m.Path) {
				return nil, nil, fmt.Errorf("%s: Pooling module path %q is not inside the model directory", mpath, m.Path)
			}
			if info.Pooling != "" {
				return nil, nil, fmt.Errorf("%s: more than one Pooling module", mpath)
			}
			p, err := readPooling(filepath.Join(dir, m.Path, ConfigFile), cfg)
			if err != nil {
				return nil, nil, err
			}
			info.Pooling = p
		case "Normalize":
			info.Normalize = true
		default:
			warnings = append(warnings, fmt.Sprintf("%s: module %s (%s) is not applied: sentence vectors will differ from sentence-transformers'", mpath, m.Type, m.Path))
		}
	}
	cpath := filepath.Join(dir, STConfigFile)
	var sc struct {
		MaxSeqLength *int `json:"max_seq_length"`
		DoLowerCase  bool `json:"do_lower_case"`
	}
	if err := readJSONFile(cpath, &sc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if sc.MaxSeqLength != nil {
		if *sc.MaxSeqLength <= 0 {
			return nil, nil, fmt.Errorf("%s: max_seq_length %d must be positive", cpath, *sc.MaxSeqLength)
		}
		info.MaxSeqLength = *sc.MaxSeqLength
		if info.MaxSeqLength > cfg.MaxPositionEmbeddings {
			warnings = append(warnings, fmt.Sprintf("%s: max_seq_length %d exceeds max_position_embeddings %d",
				cpath, info.MaxSeqLength, cfg.MaxPositionEmbeddings))
		}
	}
	info.DoLowerCase = sc.DoLowerCase
	return info, warnings, nil
}

// readPooling reads a sentence-transformers Pooling config.json.
func readPooling(path string, cfg BertConfig) (string, error) {
	var pc struct {
		Dim      int  `json:"word_embedding_dimension"`
		CLS      bool `json:"pooling_mode_cls_token"`
		Mean     bool `json:"pooling_mode_mean_tokens"`
		Max      bool `json:"pooling_mode_max_tokens"`
		MeanSqrt bool `json:"pooling_mode_mean_sqrt_len_tokens"`
		Weighted bool `json:"pooling_mode_weightedmean_tokens"`
		Last     bool `json:"pooling_mode_lasttoken"`
	}
	if err := readJSONFile(path, &pc); err != nil {
		return "", err
	}
	if pc.Dim != 0 && pc.Dim != cfg.HiddenSize {
		return "", fmt.Errorf("%s: word_embedding_dimension %d differs from hidden_size %d", path, pc.Dim, cfg.HiddenSize)
	}
	var modes []string
	for _, m := range []struct {
		on   bool
		name string
	}{{pc.CLS, "cls"}, {pc.Mean, "mean"}, {pc.Max, "max"}, {pc.MeanSqrt, "mean_sqrt_len"}, {pc.Weighted, "weightedmean"}, {pc.Last, "lasttoken"}} {
		if m.on {
			modes = append(modes, m.name)
		}
	}
	if len(modes) != 1 || modes[0] == "weightedmean" || modes[0] == "lasttoken" {
		return "", fmt.Errorf("%s: pooling modes %v: exactly one of cls, mean, max, mean_sqrt_len is supported", path, modes)
	}
	return modes[0], nil
}

// readHFTokenizer fills h's vocabulary and tokenizer settings from
// vocab.txt and tokenizer_config.json, each optional.
func readHFTokenizer(dir string, h *HFCheckpoint) error {
	h.DoLowerCase = true
	tpath := filepath.Join(dir, HFTokenizerConfigFile)
	var tc struct {
		DoLowerCase    *bool       `json:"do_lower_case"`
		ModelMaxLength json.Number `json:"model_max_length"`
	}
	if err := readJSONFile(tpath, &tc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if tc.DoLowerCase != nil {
		h.DoLowerCase = *tc.DoLowerCase
	}
	// transformers writes a huge number (1e30) for "no limit".
	if n, err := strconv.Atoi(string(tc.ModelMaxLength)); err == nil && n > 0 && n <= maxBertDim {
		h.ModelMaxLength = n
	}

	vpath := filepath.Join(dir, HFVocabFile)
	data, err := readSmallFile(vpath, maxVocabFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// Python reads the file with universal newlines, one token a line.
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return fmt.Errorf("%s: empty", vpath)
	}
	h.Vocab = strings.Split(text, "\n")
	if len(h.Vocab) > h.Config.VocabSize {
		return fmt.Errorf("%s: %d tokens, more than vocab_size %d in %s", vpath, len(h.Vocab), h.Config.VocabSize, ConfigFile)
	}
	return nil
}

// readSmallFile reads a regular file of at most limit bytes.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected of it", path, size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// readJSONFile decodes the JSON file path into v; errors name path, and a
// missing file gives an error satisfying errors.Is(err, fs.ErrNotExist).
func readJSONFile(path string, v any) error {
	data, err := readSmallFile(path, maxJSONFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%s: invalid JSON: %v", path, err)
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
