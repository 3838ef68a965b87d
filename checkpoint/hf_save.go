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
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/textarmor/textarmor/tensor"
)

// HFSaveOptions are SaveHF's settings beyond the checkpoint itself.
type HFSaveOptions struct {
	// Overwrite lets SaveHF replace a non-empty directory that is not a
	// previous SaveHF export (such a directory is always replaceable).
	Overwrite bool
	// Special tokens for the tokenizer files; empty means BERT's [UNK],
	// [SEP], [PAD], [CLS], [MASK]. All but the mask token must be in the
	// vocabulary.
	UnkToken, SepToken, PadToken, ClsToken, MaskToken string
}

// SaveHF writes h as a Hugging Face model directory at dir that
// transformers loads as BertForSequenceClassification (as BertForMaskedLM
// when h has a masked-LM head and no classifier, as BertModel when it has
// neither): config.json (model_type bert, the sizes,
// id2label/label2id from h.Labels), model.safetensors (F32; encoder and
// pooler tensors under "bert.", classifier.* and cls.* as they are),
// vocab.txt, tokenizer_config.json (BertTokenizer with h.DoLowerCase,
// model_max_length h.ModelMaxLength or else max_position_embeddings) and
// special_tokens_map.json.
//
// h.Tensors must use canonical names and hold every tensor of BertShapes
// and the pooler (pooler.dense.weight [H,H], pooler.dense.bias [H]): the
// classifier reads the pooled [CLS] vector, and transformers would
// initialise a missing pooler at random. A model trained without a pooler
// must supply one, and be used with it. h.Labels must have one label per
// classifier row (nil means h.Config.ID2Label's, or else LABEL_0,
// LABEL_1, ...), and h.Vocab at most
// vocab_size distinct tokens, each on one line.
//
// The directory is written like Save writes a model: in a temporary
// sibling renamed into place, so that it appears complete or not at all.
// An existing dir must be empty or a previous SaveHF export, unless
// opt.Overwrite is set.
func SaveHF(dir string, h *HFCheckpoint, opt HFSaveOptions) (err error) {
	if h == nil {
		return errors.New("checkpoint.SaveHF: nil checkpoint")
	}
	dir = filepath.Clean(dir)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("SaveHF %s: "+format, append([]any{dir}, args...)...)
	}
	cfg := h.Config
	if cfg.ModelType == "" {
		cfg.ModelType = "bert"
	}
	if cfg.PositionEmbeddingType == "" {
		cfg.PositionEmbeddingType = "absolute"
	}
	if err := cfg.Validate(); err != nil {
		return fail("config: %v", err)
	}
	descs := make(map[string]tensorDesc, len(h.Tensors))
	for n, t := range h.Tensors {
		if t == nil || !validShape(t) {
			return fail("tensor %q is nil or has a shape that does not match its data", n)
		}
		descs[n] = tensorDesc{dtype: "F32", shape: t.Shape}
	}
	lay, err := checkBert(cfg, descs, func(n string) (string, string) { return "", n })
	if err != nil {
		return fail("%v", err)
	}
	var extras []string
	for _, n := range slices.Sorted(maps.Keys(h.Tensors)) {
		if !lay.load[n] {
			extras = append(extras, n)
		}
	}
	if len(extras) > 0 {
		return fail("tensors %q are not part of a BERT checkpoint (want canonical names, without %q)", extras, bertPrefix)
	}
	if !lay.pooler {
		return fail("no pooler (%s, %s): transformers' BertForSequenceClassification needs one and would initialise it at random; the caller must supply it",
			poolerWeight, poolerBias)
	}
	labels := h.Labels
	if lay.classifier {
		if labels == nil {
			labels, _ = cfg.labels() // validated above
		}
		if labels == nil {
			for i := range lay.numLabels {
				labels = append(labels, "LABEL_"+strconv.Itoa(i))
			}
		}
		if len(labels) != lay.numLabels {
			return fail("%d labels for a classifier with %d rows", len(labels), lay.numLabels)
		}
		if d := firstDuplicate(labels); d != "" {
			return fail("label %q appears twice", d)
		}
	} else if len(labels) > 0 {
		return fail("%d labels but no classifier tensors", len(labels))
	}
	cfg.ID2Label, cfg.Label2ID = nil, nil
	cfg.Architectures = []string{"BertModel"}
	if lay.mlm && !lay.classifier {
		cfg.Architectures = []string{"BertForMaskedLM"}
	}
	if lay.classifier {
		cfg.Architectures = []string{"BertForSequenceClassification"}
		cfg.ID2Label, cfg.Label2ID = map[string]string{}, map[string]int{}
		for i, l := range labels {
			cfg.ID2Label[strconv.Itoa(i)] = l
			cfg.Label2ID[l] = i
		}
	}

	// Tokenizer files.
	if len(h.Vocab) == 0 {
		return fail("no vocabulary: the export needs vocab.txt to be usable")
	}
	if len(h.Vocab) > cfg.VocabSize {
		return fail("%d vocabulary tokens, more than vocab_size %d", len(h.Vocab), cfg.VocabSize)
	}
	for i, tok := range h.Vocab {
		if strings.ContainsAny(tok, "\r\n") {
			return fail("vocabulary token %d (%q) contains a line break", i, tok)
		}
	}
	if d := firstDuplicate(h.Vocab); d != "" {
		return fail("vocabulary token %q appears twice", d)
	}
	or := func(s, def string) string {
		if s == "" {
			return def
		}
		return s
	}
	special := map[string]string{
		"unk_token": or(opt.UnkToken, "[UNK]"), "sep_token": or(opt.SepToken, "[SEP]"),
		"pad_token": or(opt.PadToken, "[PAD]"), "cls_token": or(opt.ClsToken, "[CLS]"),
		"mask_token": or(opt.MaskToken, "[MASK]"),
	}
	for _, k := range []string{"unk_token", "sep_token", "pad_token", "cls_token"} {
		if !slices.Contains(h.Vocab, special[k]) {
			return fail("%s %q is not in the vocabulary", k, special[k])
		}
	}
	maxLen := h.ModelMaxLength
	if maxLen == 0 {
		maxLen = cfg.MaxPositionEmbeddings
	}
	if maxLen < 0 || maxLen > cfg.MaxPositionEmbeddings {
		return fail("model_max_length %d: want 1 to max_position_embeddings %d", maxLen, cfg.MaxPositionEmbeddings)
	}
	tokCfg := map[string]any{
		"tokenizer_class": "BertTokenizer", "do_lower_case": h.DoLowerCase, "model_max_length": maxLen,
		"tokenize_chinese_chars": true, "strip_accents": nil, "clean_up_tokenization_spaces": true,
	}
	for k, v := range special {
		tokCfg[k] = v
	}

	out := make(map[string]*tensor.Tensor, len(h.Tensors))
	for n, t := range h.Tensors {
		if isBaseName(n) {
			n = bertPrefix + n
		}
		out[n] = t
	}
	cb, err := json.MarshalIndent(struct {
		BertConfig
		TorchDtype string `json:"torch_dtype"`
		ExportedBy string `json:"exported_by"`
	}{cfg, "float32", "textarmor"}, "", "  ")
	if err != nil {
		return fail("config: %v", err)
	}
	tb, _ := json.MarshalIndent(tokCfg, "", "  ")  // strings, bools, ints, nil
	sb, _ := json.MarshalIndent(special, "", "  ") // strings
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{WeightsFile, func(w io.Writer) error { return WriteSafetensors(w, out, map[string]string{"format": "pt"}) }},
		{ConfigFile, bytesWriter(append(cb, '\n'))},
		{HFVocabFile, bytesWriter([]byte(strings.Join(h.Vocab, "\n") + "\n"))},
		{HFTokenizerConfigFile, bytesWriter(append(tb, '\n'))},
		{HFSpecialTokensFile, bytesWriter(append(sb, '\n'))},
	}

	exists, err := checkHFReplaceable(dir, opt.Overwrite)
	if err != nil {
		return err
	}
	return writeDirAtomic(dir, exists, func(tmp string) error {
		for _, f := range files {
			if err := writeSynced(filepath.Join(tmp, f.name), f.write); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
			}
		}
		return nil
	})
}

func firstDuplicate(s []string) string {
	seen := make(map[string]bool, len(s))
	for _, x := range s {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// checkHFReplaceable reports whether dir exists, and refuses a dir that is
// not a directory, or (unless overwrite) holds something other than a
// previous SaveHF export.
func checkHFReplaceable(dir string, overwrite bool) (exists bool, err error) {
	exists, empty, err := dirState(dir)
	if err != nil || !exists || empty || overwrite {
		return exists, err
	}
	var c map[string]any
	if readJSONFile(filepath.Join(dir, ConfigFile), &c) != nil || c[hfExportMark] != "textarmor" {
		return false, fmt.Errorf("%s exists and is not a textarmor Hugging Face export; refusing to replace it (HFSaveOptions.Overwrite would)", dir)
	}
	return true, nil
}

// swapDir moves the complete directory tmp to dir (Save and SaveHF): any
// existing dir is moved aside first and back if the move fails, so readers
// see the old directory or the new one, never a mix. A failed cleanup of the
// old copy leaves only a stray sibling, not worth failing the save for.
func swapDir(tmp, dir string, exists bool) (err error) {
	var old string
	if exists {
		if old, err = unusedName(dir + ".old-"); err != nil {
			return err
		}
		if err = rename(dir, old); err != nil {
			return err
		}
	}
	if err = rename(tmp, dir); err != nil {
		if old != "" {
			if rerr := rename(old, dir); rerr != nil {
				return fmt.Errorf("%w; restoring the previous directory also failed (%v): it is at %s", err, rerr, old)
			}
		}
		return err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	if serr := syncDir(filepath.Dir(dir)); serr != nil {
		return fmt.Errorf("%s: saved, but syncing its parent failed: %w", dir, serr)
	}
	return nil
}
