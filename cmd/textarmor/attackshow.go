package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/textarmor/textarmor/internal/progress"
	"github.com/textarmor/textarmor/pipeline"
)

// showFlags are --show and --color: a before/after word diff of every
// attacked example on stderr (attack.Result.Show).
type showFlags struct {
	on    bool
	color string
}

func (sf *showFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&sf.on, "show", false, "print each attacked example with its substituted words marked, before and after, to stderr")
	fs.StringVar(&sf.color, "color", "auto", "--show colours: auto (when stderr is a terminal), always, never ([[word]] marks without colour)")
}

// apply sets c's Show and ShowColor: the examples go to w.
func (sf *showFlags) apply(c *pipeline.AttackConfig, w io.Writer) error {
	switch sf.color {
	case "auto":
		c.ShowColor = progress.IsTerminal(w)
	case "always":
		c.ShowColor = true
	case "never":
		c.ShowColor = false
	default:
		return usageError{fmt.Errorf("--color %q: want auto, always or never", sf.color)}
	}
	if sf.on {
		c.Show = w
	}
	return nil
}
