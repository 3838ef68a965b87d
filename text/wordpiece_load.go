package text

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// LoadWordPiece reads a Hugging Face BERT tokenizer folder. The vocabulary
// comes from vocab.txt (one token per line, id = line number) or, without
// it, from the WordPiece model of tokenizer.json; when both exist they must
// agree. The settings come from tokenizer_config.json (do_lower_case,
// strip_accents, tokenize_chinese_chars, the special tokens, added tokens,
// model_max_length; missing keys take BertTokenizer's defaults), as
// transformers does; without it, from tokenizer.json's normalizer and model.
// special_tokens_map.json fills in special tokens tokenizer_config.json does
// not name.
func LoadWordPiece(dir string) (*WordPiece, error) {
	vocabPath := filepath.Join(dir, "vocab.txt")
	tokPath := filepath.Join(dir, "tokenizer.json")
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	mapPath := filepath.Join(dir, "special_tokens_map.json")

	var vocab []string
	haveVocab := false
	if f, err := os.Open(vocabPath); err == nil {
		vocab, err = readVocabTxt(f, vocabPath)
		f.Close()
		if err != nil {
			return nil, err
		}
		haveVocab = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("text: %w", err)
	}

	var tj *hfTokenizerJSON
	if data, err := os.ReadFile(tokPath); err == nil {
		tj = new(hfTokenizerJSON)
		if err := json.Unmarshal(data, tj); err != nil {
			return nil, fmt.Errorf("text: %s: %w", tokPath, err)
		}
		if tj.Model.Type != "WordPiece" {
			return nil, fmt.Errorf("text: %s: model type %q is not WordPiece", tokPath, tj.Model.Type)
		}
		tv, err := tj.vocab(tokPath)
		if err != nil {
			return nil, err
		}
		if haveVocab {
			if len(tv) != len(vocab) {
				return nil, fmt.Errorf("text: %s has %d tokens but %s has %d", vocabPath, len(vocab), tokPath, len(tv))
			}
			for i := range tv {
				if tv[i] != vocab[i] {
					return nil, fmt.Errorf("text: %s line %d is %q but %s gives id %d to %q", vocabPath, i+1, vocab[i], tokPath, i, tv[i])
				}
			}
		} else {
			vocab = tv
		}
		if vocab, err = addTokens(vocab, tj.AddedTokens, tokPath); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("text: %w", err)
	} else if !haveVocab {
		return nil, fmt.Errorf("text: no WordPiece vocabulary in %s: neither vocab.txt nor tokenizer.json exists", dir)
	}

	opts := DefaultWordPieceOptions()
	var cfg *hfTokenizerConfig
	if data, err := os.ReadFile(cfgPath); err == nil {
		cfg = new(hfTokenizerConfig)
		if err := json.Unmarshal(data, cfg); err != nil {
			return nil, fmt.Errorf("text: %s: %w", cfgPath, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("text: %w", err)
	}

	if cfg != nil {
		if err := cfg.apply(&opts, cfgPath); err != nil {
			return nil, err
		}
		var err error
		if vocab, err = addTokens(vocab, cfg.added(), cfgPath); err != nil {
			return nil, err
		}
	} else if tj != nil {
		if err := tj.apply(&opts, tokPath); err != nil {
			return nil, err
		}
	}
	if tj != nil {
		// Model parameters that tokenizer_config.json does not carry.
		if tj.Model.ContinuingSubwordPrefix != nil {
			opts.ContinuingPrefix = *tj.Model.ContinuingSubwordPrefix
		}
		if tj.Model.MaxInputCharsPerWord != nil {
			opts.MaxWordChars = *tj.Model.MaxInputCharsPerWord
		}
		for _, at := range tj.AddedTokens {
			if !at.Normalized {
				opts.NeverSplit = appendNew(opts.NeverSplit, at.Content)
			}
		}
	}

	if data, err := os.ReadFile(mapPath); err == nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("text: %s: %w", mapPath, err)
		}
		for key, dst := range opts.specialFields() {
			if cfg != nil && cfg.has(key) {
				continue
			}
			if raw, ok := m[key]; ok {
				tok, err := parseHFToken(raw)
				if err != nil {
					return nil, fmt.Errorf("text: %s: %s: %w", mapPath, key, err)
				}
				*dst = tok
			}
		}
	}

	wp, err := NewWordPiece(vocab, opts)
	if err != nil {
		files := []string{}
		if haveVocab {
			files = append(files, vocabPath)
		} else {
			files = append(files, tokPath)
		}
		if cfg != nil {
			files = append(files, cfgPath)
		}
		return nil, fmt.Errorf("%w (loading %s)", err, strings.Join(files, ", "))
	}
	return wp, nil
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// readVocabTxt reads one token per line; the line number (from 0) is the id.
func readVocabTxt(f *os.File, path string) ([]string, error) {
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var vocab []string
	seen := map[string]int{}
	for sc.Scan() {
		tok := strings.TrimSuffix(sc.Text(), "\r")
		line := len(vocab) + 1
		if tok == "" {
			return nil, fmt.Errorf("text: %s line %d: empty token", path, line)
		}
		if prev, dup := seen[tok]; dup {
			return nil, fmt.Errorf("text: %s line %d: token %q already on line %d", path, line, tok, prev)
		}
		seen[tok] = line
		vocab = append(vocab, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("text: %s line %d: %w", path, len(vocab)+1, err)
	}
	if len(vocab) == 0 {
		return nil, fmt.Errorf("text: %s: no tokens", path)
	}
	return vocab, nil
}

// hfTokenizerJSON is the part of tokenizer.json that a BERT tokenizer uses.
type hfTokenizerJSON struct {
	AddedTokens []addedToken `json:"added_tokens"`
	Normalizer  *struct {
		Type               string `json:"type"`
		CleanText          *bool  `json:"clean_text"`
		HandleChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents       *bool  `json:"strip_accents"`
		Lowercase          *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type          string          `json:"type"`
		CLS           json.RawMessage `json:"cls"` // BertProcessing: ["[CLS]", 101]
		SEP           json.RawMessage `json:"sep"`
		Single        json.RawMessage `json:"single"` // TemplateProcessing
		SpecialTokens map[string]struct {
			ID string `json:"id"`
		} `json:"special_tokens"`
	} `json:"post_processor"`
	Padding *struct {
		PadToken string `json:"pad_token"`
	} `json:"padding"`
	Model struct {
		Type                    string           `json:"type"`
		Vocab                   map[string]int64 `json:"vocab"`
		UnkToken                string           `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	} `json:"model"`
}

// vocab returns the model vocabulary as a list; ids must be 0..n-1.
func (tj *hfTokenizerJSON) vocab(path string) ([]string, error) {
	n := len(tj.Model.Vocab)
	if n == 0 {
		return nil, fmt.Errorf("text: %s: empty model vocab", path)
	}
	list := make([]string, n)
	for tok, id := range tj.Model.Vocab {
		if id < 0 || id >= int64(n) {
			return nil, fmt.Errorf("text: %s: token %q has id %d, outside 0..%d", path, tok, id, n-1)
		}
		if list[id] != "" {
			return nil, fmt.Errorf("text: %s: tokens %q and %q share id %d", path, list[id], tok, id)
		}
		list[id] = tok
	}
	return list, nil
}

// addedToken is a Hugging Face added token: its id and whether it is
// matched on normalised text.
type addedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	Normalized bool   `json:"normalized"`
}

// addTokens checks added tokens against vocab and appends those with the
// next free ids (tokens added after training).
func addTokens(vocab []string, added []addedToken, path string) ([]string, error) {
	sort.SliceStable(added, func(i, j int) bool { return added[i].ID < added[j].ID })
	for _, at := range added {
		switch {
		case at.ID >= 0 && at.ID < len(vocab):
			if vocab[at.ID] != at.Content {
				return nil, fmt.Errorf("text: %s: added token %q has id %d, which the vocabulary gives to %q", path, at.Content, at.ID, vocab[at.ID])
			}
		case at.ID == len(vocab):
			vocab = append(vocab, at.Content)
		default:
			return nil, fmt.Errorf("text: %s: added token %q has id %d, but the vocabulary has %d tokens", path, at.Content, at.ID, len(vocab))
		}
	}
	return vocab, nil
}

// apply takes the settings of tokenizer.json's normalizer, pre-tokenizer and
// post-processor.
func (tj *hfTokenizerJSON) apply(o *WordPieceOptions, path string) error {
	if nz := tj.Normalizer; nz != nil {
		if nz.Type != "BertNormalizer" {
			return fmt.Errorf("text: %s: normalizer %q is not supported (only BertNormalizer)", path, nz.Type)
		}
		if nz.CleanText != nil && !*nz.CleanText {
			return fmt.Errorf("text: %s: BertNormalizer with clean_text false is not supported", path)
		}
		if nz.Lowercase != nil {
			o.Lowercase = *nz.Lowercase
		}
		if nz.HandleChineseChars != nil {
			o.ChineseChars = *nz.HandleChineseChars
		}
		o.StripAccents = nz.StripAccents
	} else {
		return fmt.Errorf("text: %s: no normalizer (only BertNormalizer is supported)", path)
	}
	if pt := tj.PreTokenizer; pt == nil || pt.Type != "BertPreTokenizer" {
		return fmt.Errorf("text: %s: pre_tokenizer is not BertPreTokenizer", path)
	}
	if tj.Model.UnkToken != "" {
		o.Unk = tj.Model.UnkToken
	}
	if pp := tj.PostProcessor; pp != nil {
		switch pp.Type {
		case "BertProcessing":
			var cls, sep []any
			if json.Unmarshal(pp.CLS, &cls) == nil && len(cls) == 2 {
				if s, ok := cls[0].(string); ok {
					o.CLS = s
				}
			}
			if json.Unmarshal(pp.SEP, &sep) == nil && len(sep) == 2 {
				if s, ok := sep[0].(string); ok {
					o.SEP = s
				}
			}
		case "TemplateProcessing":
			// single: [{"SpecialToken": CLS}, {"Sequence": A}, {"SpecialToken": SEP}]
			var single []struct {
				SpecialToken *struct {
					ID string `json:"id"`
				} `json:"SpecialToken"`
			}
			if err := json.Unmarshal(pp.Single, &single); err == nil && len(single) == 3 &&
				single[0].SpecialToken != nil && single[2].SpecialToken != nil {
				o.CLS = single[0].SpecialToken.ID
				o.SEP = single[2].SpecialToken.ID
			}
		}
	}
	if tj.Padding != nil && tj.Padding.PadToken != "" {
		o.Pad = tj.Padding.PadToken
	}
	return nil
}

// hfTokenizerConfig is tokenizer_config.json; special tokens are strings or
// AddedToken objects, so they are kept raw.
type hfTokenizerConfig struct {
	DoLowerCase          *bool    `json:"do_lower_case"`
	StripAccents         *bool    `json:"strip_accents"`
	TokenizeChineseChars *bool    `json:"tokenize_chinese_chars"`
	ModelMaxLength       *float64 `json:"model_max_length"`
	AddedTokensDecoder   map[string]struct {
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens_decoder"`
	raw map[string]json.RawMessage
}

func (c *hfTokenizerConfig) UnmarshalJSON(data []byte) error {
	type plain hfTokenizerConfig
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &p.raw); err != nil {
		return err
	}
	*c = hfTokenizerConfig(p)
	return nil
}

func (c *hfTokenizerConfig) has(key string) bool {
	raw, ok := c.raw[key]
	return ok && string(raw) != "null"
}

// specialFields maps the Hugging Face special-token keys to the options.
func (o *WordPieceOptions) specialFields() map[string]*string {
	return map[string]*string{
		"unk_token": &o.Unk, "cls_token": &o.CLS, "sep_token": &o.SEP,
		"pad_token": &o.Pad, "mask_token": &o.Mask,
	}
}

// apply takes BertTokenizer's settings; absent keys keep their defaults.
func (c *hfTokenizerConfig) apply(o *WordPieceOptions, path string) error {
	if c.DoLowerCase != nil {
		o.Lowercase = *c.DoLowerCase
	}
	if c.TokenizeChineseChars != nil {
		o.ChineseChars = *c.TokenizeChineseChars
	}
	o.StripAccents = c.StripAccents
	if c.ModelMaxLength != nil && *c.ModelMaxLength >= 1 && *c.ModelMaxLength <= math.MaxInt32 {
		o.ModelMaxLength = int(*c.ModelMaxLength)
	}
	for key, dst := range o.specialFields() {
		if !c.has(key) {
			continue
		}
		tok, err := parseHFToken(c.raw[key])
		if err != nil {
			return fmt.Errorf("text: %s: %s: %w", path, key, err)
		}
		*dst = tok
	}
	for _, at := range c.added() {
		if !at.Normalized {
			o.NeverSplit = appendNew(o.NeverSplit, at.Content)
		}
	}
	return nil
}

// added returns added_tokens_decoder sorted by id (entries with a key that
// is not a number are skipped).
func (c *hfTokenizerConfig) added() []addedToken {
	var list []addedToken
	for key, at := range c.AddedTokensDecoder {
		id, err := strconv.Atoi(key)
		if err != nil || at.Content == "" {
			continue
		}
		list = append(list, addedToken{ID: id, Content: at.Content, Normalized: at.Normalized})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].ID < list[j].ID })
	return list
}

// parseHFToken reads a special token written as a string or as an
// AddedToken object {"content": ...}.
func parseHFToken(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == "" {
		return "", fmt.Errorf("want a string or {\"content\": ...}, got %s", raw)
	}
	return obj.Content, nil
}
