package main

import (
	"io"
	"strings"

	"github.com/textarmor/textarmor/attack"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/pipeline"
)

// attackInputs, nearestFlags, nearestCacheDir and attackSetup keep
// `train --defense flat|adv` (flattrain.go) building its attacker as
// before, on pipeline.BuildRecipe.
type attackInputs struct {
	synPath, dataDir, wnDir, vecPath string
	nf                               nearestFlags
	cacheDir                         string
}

// nearestFlags is the neighbourhood of nearest substitutes from --vectors.
type nearestFlags struct {
	k   int
	cos float64
}

func nearestCacheDir(out string) string { return pipeline.NearestCacheDir(out) }

// attackSetup builds recipe rc under protocol against m with the CLI's
// resources.
func attackSetup(rc attack.Recipe, protocol string, m *model.Model, in attackInputs, stderr io.Writer) (*attack.Configured, error) {
	return pipeline.BuildRecipe(rc, protocol, m, pipeline.AttackResources{Synonyms: in.synPath, DataDir: in.dataDir,
		WordNet: in.wnDir, Vectors: in.vecPath, Nearest: pipeline.NearestConfig{K: in.nf.k, Cos: in.nf.cos},
		CacheDir: in.cacheDir, Log: stderr})
}

// specList is a repeatable flag.
type specList []string

func (l *specList) String() string     { return strings.Join(*l, " ") }
func (l *specList) Set(s string) error { *l = append(*l, s); return nil }
