package pipeline

import (
	"strings"

	"github.com/textarmor/textarmor/dataset"
	"github.com/textarmor/textarmor/model"
)

// Sentence pairs (the mrpc and snli presets): a transformer fine-tuned on
// them reads "[CLS] a [SEP] b [SEP]" (model.Model.Pairs). train, eval,
// attack and predict take pairs; the jobs that read one text per example
// refuse a pair model (refusePairModel), and every job that scores a model
// on a split checks that it reads the split's kind of input (SameInputs).

// SameInputs refuses to score a model on examples it does not read:
// sentence pairs with a model that reads one text, or single texts with a
// model that reads pairs.
func SameInputs(m *model.Model, ex []dataset.Example) error {
	pairs := dataset.HasPairs(ex)
	switch {
	case pairs && !m.Pairs():
		return configErrorf("the data holds sentence pairs, which this model does not read: fine-tune a transformer on them (train --init DIR --model transformer)")
	case !pairs && m.Pairs() && len(ex) > 0:
		return configErrorf("the model reads sentence pairs, the data holds single texts")
	}
	return nil
}

// refusePairModel refuses a model that reads sentence pairs in a job that
// reads one text per example (what names it).
func refusePairModel(m *model.Model, what string) error {
	if m.Pairs() {
		return configErrorf("%s is for models that read one text; this model reads sentence pairs (train, eval, attack and predict take them)", what)
	}
	return nil
}

// refusePairData refuses sentence pairs in a training job that only a
// fine-tuned transformer with standard training takes.
func refusePairData(ds *dataset.Dataset, why string) error {
	if ds.Pairs() {
		return configErrorf("dataset %s holds sentence pairs: %s", ds.Name, why)
	}
	return nil
}

// predictPairs classifies predict's inputs for a model that reads pairs:
// each text is "first<TAB>second".
func predictPairs(m *model.Model, texts []string) ([]model.Prediction, error) {
	a, b := make([]string, len(texts)), make([]string, len(texts))
	for i, s := range texts {
		f := strings.Split(s, "\t")
		if len(f) != 2 || strings.TrimSpace(f[0]) == "" || strings.TrimSpace(f[1]) == "" {
			return nil, configErrorf("input %d: the model reads sentence pairs: give each as \"first<TAB>second\" (%d TAB-separated fields)", i+1, len(f))
		}
		a[i], b[i] = f[0], f[1]
	}
	return m.PredictPairs(a, b)
}
