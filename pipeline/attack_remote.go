package pipeline

import (
	"context"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/checkpoint"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/text"
)

// remoteTokenizer is the word tokenizer a remote victim's texts are split
// with when the endpoint names none.
const remoteTokenizer = "whitespace"

// checkRemote validates the remote victim's numbers (with a Victim).
func (c *AttackConfig) checkRemote() error {
	if c.Victim == "" {
		return nil
	}
	r := c.Remote
	return CheckRules(
		Rule{r.Batch >= 1 && r.Batch <= 100000, "victim-batch", r.Batch, "in [1, 100000]"},
		Rule{r.Concurrency >= 1 && r.Concurrency <= 1024, "victim-concurrency", r.Concurrency, "in [1, 1024]"},
		Rule{r.Timeout > 0, "victim-timeout", r.Timeout, "positive"},
		Rule{r.Retries >= 0 && r.Retries <= 100, "victim-retries", r.Retries, "in [0, 100]"},
		Rule{r.Budget >= 0, "victim-budget", r.Budget, "≥ 0 (0 = no limit)"},
	)
}

// victim opens what is attacked: the model directory, or for a remote
// victim the endpoint (its classes asked) and a stand-in model that holds
// them with the endpoint's word tokenizer and an open vocabulary (no
// network: recipes that need the model's own embedding table or
// gradients are refused).
func (c *AttackConfig) victim(ctx context.Context, log io.Writer) (*model.Model, *attack.RemoteModel, error) {
	if c.Victim == "" {
		m, err := model.Load(c.Model)
		return m, nil, err
	}
	opt := c.Remote
	if opt.Retries == 0 {
		opt.Retries = -1 // none asked for; RemoteOptions' zero is its default
	}
	r, err := attack.NewRemoteModel(ctx, c.Victim, opt)
	if err != nil {
		return nil, nil, err
	}
	info := r.Info()
	name := info.Tokenizer
	if name == "" {
		name = remoteTokenizer
	}
	tok, err := text.NewTokenizer(name)
	if err != nil {
		return nil, nil, fmt.Errorf("remote victim %s: %w", c.Victim, err)
	}
	fmt.Fprintf(log, "remote victim %s: model %q, classes %q, tokenizer %s\n", c.Victim, info.Model, info.Classes, name)
	m := &model.Model{Meta: model.Meta{Tokenizer: name, Classes: info.Classes}, Vocab: text.NewOpenVocab(), Tok: tok}
	return m, r, nil
}

// victimDigest identifies what a results file was written against: the
// model's weights, or the endpoint (with the digest it reports, if any).
func (c *AttackConfig) victimDigest(r *attack.RemoteModel) (string, error) {
	if r == nil {
		return checkpoint.WeightsDigest(c.Model)
	}
	id := "remote " + c.Victim
	if i := r.Info(); i.Model != "" || i.Digest != "" {
		id += fmt.Sprintf(" model %q digest %s", i.Model, i.Digest)
	}
	return id, nil
}
