package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/mlm"
	"github.com/textarmor/textarmor/model"
)

// MLMHeadConfig is `mlm train-head`: a masked-LM head for a transformer
// checkpoint that has none (the shared all-MiniLM-L6-v2), trained on the
// training texts of dataset presets and scored on their test texts.
type MLMHeadConfig struct {
	// Init is a Hugging Face BERT-architecture directory. When it has its
	// own head (cls.predictions.*) that head is scored and, unless
	// Retrain, kept as it is.
	Init    string
	Retrain bool
	// Data selects the texts: each of Datasets as a preset under
	// Data.Dir, or Data's files when Datasets is empty.
	Data     Data
	Datasets []string
	// TrainN and TestN are seeded samples of each dataset's training and
	// test texts (0: all); MaxLen the word pieces read, [CLS] and [SEP]
	// included.
	TrainN, TestN, MaxLen int
	// Unfreeze is how many top layers train with the head.
	Unfreeze int
	Options  mlm.Options
	// Out is the Hugging Face directory written (BertForMaskedLM).
	// Training checkpoints go to Out+".ckpt" (Options.CheckpointEvery);
	// Resume continues the run recorded there and refuses another's.
	Out       string
	Overwrite bool
	Resume    bool
	Log       io.Writer
}

// NewMLMHeadConfig returns the CLI's defaults: a fixed encoder, the
// checkpoint's length, 20,000 training texts and 1,000 test texts per
// dataset.
func NewMLMHeadConfig() MLMHeadConfig {
	return MLMHeadConfig{Data: NewData(), TrainN: 20000, TestN: 1000, Options: mlm.DefaultOptions()}
}

// MLMHeadReport is what a run did and how good the head is.
type MLMHeadReport struct {
	Init string `json:"init"`
	// FromCheckpoint: the checkpoint's own head, not trained here.
	FromCheckpoint bool        `json:"from_checkpoint"`
	Unfreeze       int         `json:"unfreeze"`
	Texts          int         `json:"train_texts"`
	Epochs         []mlm.Epoch `json:"epochs,omitempty"`
	// HeldOut is the masked-piece accuracy per dataset's test texts,
	// before training and after.
	Before  map[string]mlm.Accuracy `json:"before,omitempty"`
	HeldOut map[string]mlm.Accuracy `json:"held_out"`
	Out     string                  `json:"out,omitempty"`
	Seconds float64                 `json:"seconds"`
}

// TrainMLMHead imports c.Init with a head, trains it unless the
// checkpoint brought its own, scores it and writes it to c.Out.
func TrainMLMHead(ctx context.Context, c MLMHeadConfig) (*MLMHeadReport, error) {
	start := time.Now()
	if err := CheckRules(Rule{c.TrainN >= 0, "n", c.TrainN, "≥ 0 (0 = all)"}, Rule{c.TestN >= 0, "test-n", c.TestN, "≥ 0 (0 = all)"},
		Rule{c.MaxLen >= 0, "max-len", c.MaxLen, "≥ 0 (0 = the checkpoint's)"}, Rule{c.Unfreeze >= 0, "unfreeze", c.Unfreeze, "≥ 0"},
		Rule{c.Options.Epochs >= 1, "epochs", c.Options.Epochs, "at least 1"}, Rule{c.Options.Batch >= 1, "batch", c.Options.Batch, "at least 1"},
		Rule{isFinite(c.Options.LR) && c.Options.LR > 0, "lr", c.Options.LR, "> 0"}, Rule{isFinite(c.Options.Clip) && c.Options.Clip >= 0, "clip", c.Options.Clip, "≥ 0"},
		Rule{isFinite(c.Options.Masking.Rate) && c.Options.Masking.Rate > 0 && c.Options.Masking.Rate <= 1, "mask-rate", c.Options.Masking.Rate, "in (0, 1]"},
		Rule{c.Options.CheckpointEvery >= 0, "checkpoint-every", c.Options.CheckpointEvery, "≥ 0 (0 = epoch ends only)"}); err != nil {
		return nil, err
	}
	if c.Init == "" {
		return nil, configErrorf("--init is required (a Hugging Face BERT-architecture directory)")
	}
	m, err := model.ImportHF(c.Init, model.ImportOptions{MaxLen: c.MaxLen, Reconstructor: true, Seed: c.Options.Seed})
	if err != nil {
		return nil, err
	}
	m.Classes = nil // a checkpoint's classifier is not part of what is written: an encoder and its head
	h, err := mlm.NewHead(m.Net, c.Unfreeze)
	if err != nil {
		return nil, &ConfigError{fmt.Errorf("--unfreeze: %w", err)}
	}
	own, _ := m.Training["reconstructor_from_checkpoint"].(bool)
	switch {
	case c.Out == "" && (!own || c.Retrain):
		if !own {
			return nil, configErrorf("%s has no masked-LM head (cls.predictions.*): train one with 'mlm train-head --init %s --out DIR'", c.Init, c.Init)
		}
		return nil, configErrorf("--out is required")
	}
	sets, err := c.texts(m)
	if err != nil {
		return nil, err
	}
	pieces := mlm.PiecesOf(m)
	r := &MLMHeadReport{Init: c.Init, FromCheckpoint: own && !c.Retrain, Unfreeze: c.Unfreeze, HeldOut: map[string]mlm.Accuracy{}}
	score := func(into map[string]mlm.Accuracy) {
		for _, s := range sets {
			a := mlm.Evaluate(h, s.test, pieces, c.Options.Masking, c.Options.Seed+1, 64)
			into[s.name] = a
			fmt.Fprintf(orDiscard(c.Log), "mlm: %s test, %d masked pieces: top-1 %.2f %%, top-10 %.2f %%\n", s.name, a.N, 100*a.Top1, 100*a.Top10)
		}
	}
	if !r.FromCheckpoint {
		if own {
			r.Before = map[string]mlm.Accuracy{}
			score(r.Before)
		}
		var train [][]int32
		for _, s := range sets {
			train = append(train, s.train...)
		}
		r.Texts = len(train)
		o := c.Options
		o.Log, o.Resume = c.Log, c.Resume
		if c.Out != "" {
			o.Checkpoint = c.Out + ".ckpt"
			if o.Identity, err = c.identity(train); err != nil {
				return nil, err
			}
		}
		if r.Epochs, err = mlm.Train(ctx, h, train, pieces, o); err != nil {
			return nil, err
		}
		m.Training = map[string]any{"imported_from": c.Init, "mlm_head": r.Epochs, "mlm_unfreeze": c.Unfreeze, "mlm_train_texts": r.Texts}
	}
	score(r.HeldOut)
	if c.Out != "" {
		if err := m.ExportHF(c.Out, c.Overwrite); err != nil {
			return nil, err
		}
		if err := os.RemoveAll(c.Out + ".ckpt"); err != nil {
			return nil, err
		}
	}
	r.Out, r.Seconds = c.Out, time.Since(start).Seconds()
	return r, nil
}

// WriteText prints each test set's accuracy, one line per set.
func (r *MLMHeadReport) WriteText(w io.Writer) error {
	for _, name := range slices.Sorted(maps.Keys(r.HeldOut)) {
		a := r.HeldOut[name]
		if _, err := fmt.Fprintf(w, "%s: top-1 %.2f %%, top-10 %.2f %% of %d masked word pieces\n", name, 100*a.Top1, 100*a.Top10, a.N); err != nil {
			return err
		}
	}
	return nil
}

// identity is what a checkpoint of this run records: the settings and a
// digest of the encoded training texts.
func (c MLMHeadConfig) identity(train [][]int32) (json.RawMessage, error) {
	h := fnv.New64a()
	var b [4]byte
	for _, s := range train {
		for _, id := range s {
			binary.LittleEndian.PutUint32(b[:], uint32(id))
			h.Write(b[:])
		}
		h.Write([]byte{0xff, 0xff, 0xff, 0xff})
	}
	o := c.Options
	return json.Marshal(map[string]any{"init": c.Init, "datasets": c.Datasets, "train": c.Data.Train, "n": c.TrainN, "max_len": c.MaxLen,
		"unfreeze": c.Unfreeze, "epochs": o.Epochs, "batch": o.Batch, "lr": o.LR, "clip": o.Clip, "masking": o.Masking, "seed": o.Seed,
		"texts": len(train), "digest": fmt.Sprintf("%016x", h.Sum64())})
}

type mlmTexts struct {
	name        string
	train, test [][]int32
}

// texts encodes each dataset's training and test sample for m.
func (c MLMHeadConfig) texts(m *model.Model) ([]mlmTexts, error) {
	names := c.Datasets
	if len(names) == 0 {
		names = []string{""}
	}
	var out []mlmTexts
	for _, n := range names {
		d := c.Data
		if n != "" {
			d.Preset = n
		}
		name := n // the held-out texts' name: the preset's, else the test file's
		if name == "" {
			name = filepath.Base(cmp.Or(d.Test, d.Train))
		}
		trainOnly := d.Preset == "" && d.Train == "" && d.Test != "" // test texts alone ('mlm eval --test')
		if trainOnly {
			d.Train, d.Test = d.Test, ""
		}
		ds, _, err := d.Load()
		if err != nil {
			return nil, err
		}
		trainEx, test := ds.Train, ds.Train
		if trainOnly {
			trainEx = nil
		} else if test, err = Split(ds, "test"); err != nil {
			return nil, err
		}
		enc := func(ex []dataset.Example, k int) [][]int32 {
			ex = dataset.SeededSubset(ex, k, c.Options.Seed)
			seqs := make([][]int32, len(ex))
			for i, e := range ex {
				seqs[i] = m.Encode(e.Text)
			}
			return seqs
		}
		out = append(out, mlmTexts{name: name, train: enc(trainEx, c.TrainN), test: enc(test, c.TestN)})
	}
	return out, nil
}
