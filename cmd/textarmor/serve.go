package main

import (
	"context"
	"io"

	"github.com/textarmor/textarmor/internal/cli"
	"github.com/textarmor/textarmor/serve"
)

func runServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "serve --model DIR [--model NAME=DIR ...] [--addr 127.0.0.1:8080] [flags]   (docs/serving.md)", stderr)
	c := serve.NewConfig()
	var models cli.List
	fs.Var(&models, "model", "model to serve: DIR or NAME=DIR, a textarmor model or a Hugging Face directory (repeatable)")
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address, host:port")
	fs.IntVar(&c.MaxBatch, "max-batch", c.MaxBatch, "texts per forward pass at most, merged across concurrent requests (1 = no micro-batching)")
	fs.DurationVar(&c.MaxWait, "max-wait", c.MaxWait, "how long a forward pass waits for other requests to join it")
	fs.IntVar(&c.Workers, "workers", c.Workers, "forward passes at once per model, and explain/attack requests at once")
	fs.IntVar(&c.Queue, "queue", c.Queue, "texts waiting per model past which a request gets 429")
	fs.Int64Var(&c.MaxBody, "max-body", c.MaxBody, "largest request body in bytes (413 past it)")
	fs.IntVar(&c.MaxTexts, "max-texts", c.MaxTexts, "texts per request at most (413 past it)")
	fs.IntVar(&c.MaxWords, "max-words", c.MaxWords, "words per text at most (413 past it)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "each request's deadline, waiting included (503 past it)")
	fs.IntVar(&c.MaxQueries, "max-queries", c.MaxQueries, "/v1/attack: the largest query budget")
	fs.StringVar(&c.Attack.Synonyms, "synonyms", "", "/v1/attack: counter-fitted neighbour JSON (default: the one under --data)")
	fs.StringVar(&c.Attack.WordNet, "wordnet", c.Attack.WordNet, "/v1/attack: WordNet dict directory")
	fs.StringVar(&c.Attack.Vectors, "vectors", "", "/v1/attack: word vectors (textfooler's and the nearest-neighbour recipes')")
	fs.StringVar(&c.Attack.DataDir, "data", defaultDataDir(), "folder laid out like shared/data (env TEXTARMOR_DATA)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	c.Models, c.Log = models, stderr
	return serve.Run(context.Background(), c)
}
