package experiments

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/textarmor/textarmor/checkpoint"
)

// ReproTable is one table's claims as the reproduction report shows them,
// read from the table's table.json (ReadReproTable).
type ReproTable struct {
	// Source is the table.json it was read from.
	Source string `json:"source"`
	Paper  string `json:"paper"`
	Table  string `json:"table"`
	// Seeds are the trained instances' offsets (one: a single-seed table).
	Seeds  []int64 `json:"seeds"`
	Claims []Claim `json:"claims"`
	// Deviations apply to every claim of the table.
	Deviations []string `json:"deviations,omitempty"`
	// Legacy: the table.json predates structured claims, so the claims
	// are its check lines with the verdicts as the table printed them.
	Legacy bool `json:"legacy,omitempty"`
}

// reproKind reads one kind of table.json: detect recognises it by its
// keys, read turns it into claims. A structured "claims" array (FTML and
// FLAT since issue #48) is read by any kind; the kinds below only add the
// older files' check lines. To add a table (CARL/RAR, SPGD, RobustEmbed
// with structured claims), write Claim values into its table.json.
type reproKind struct {
	paper  string
	detect func(map[string]json.RawMessage) bool
	table  func(map[string]json.RawMessage) string
	// paperValue gives the paper's numbers for a legacy check line ("" if
	// unknown); deviations the table's, from its settings.
	paperValue func(js map[string]json.RawMessage, line string) string
	deviations func(map[string]json.RawMessage) []string
}

var reproKinds = []reproKind{
	{paper: "FTML", detect: hasKeys("arch", "cells", "paper", "checks"), table: ftmlReproTable, paperValue: ftmlLegacyPaper, deviations: ftmlLegacyDeviations},
	{paper: "FLAT", detect: hasKeys("train_attack", "values", "checks"), table: flatReproTable, paperValue: flatLegacyPaper, deviations: flatLegacyDeviations},
	{paper: "SPGD", detect: hasKeys("gap", "accuracy", "checks"), table: fixed("Tables 3 and 1, IMDB")},
	{paper: "CARL/RAR", detect: hasKeys("cells", "checks"), table: fixed("Tables 2, 4 and 5")},
	{paper: "RobustEmbed", detect: hasKeys("advsts", "claims"), table: fixed("Tables 1 and 4 (scaled)")},
}

func hasKeys(keys ...string) func(map[string]json.RawMessage) bool {
	return func(js map[string]json.RawMessage) bool {
		for _, k := range keys {
			if _, ok := js[k]; !ok {
				return false
			}
		}
		return true
	}
}

func fixed(s string) func(map[string]json.RawMessage) string {
	return func(map[string]json.RawMessage) string { return s }
}

// field decodes one key of a table.json into v, leaving v as it is when
// the key is absent or does not decode.
func field(js map[string]json.RawMessage, key string, v any) bool {
	raw, ok := js[key]
	return ok && json.Unmarshal(raw, v) == nil
}

// ReadReproTable reads a table.json: a path to the file, or a folder
// holding one.
func ReadReproTable(path string) (*ReproTable, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "table.json")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var js map[string]json.RawMessage
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var kind *reproKind
	for i := range reproKinds {
		if reproKinds[i].detect(js) {
			kind = &reproKinds[i]
			break
		}
	}
	t := &ReproTable{Source: path, Seeds: []int64{0}}
	field(js, "seeds", &t.Seeds)
	field(js, "deviations", &t.Deviations)
	var claims []Claim
	if field(js, "claims", &claims) && len(claims) > 0 && claims[0].Claim != "" {
		t.Claims, t.Paper, t.Table = claims, claims[0].Paper, claims[0].Table
		return t, nil
	}
	if kind == nil {
		return nil, fmt.Errorf("%s: not a table.json this report knows (no claims, and none of the FTML, FLAT, SPGD, CARL/RAR or RobustEmbed layouts)", path)
	}
	t.Paper, t.Table, t.Legacy = kind.paper, kind.table(js), true
	if kind.deviations != nil && t.Deviations == nil {
		t.Deviations = kind.deviations(js)
	}
	var lines []string
	if !field(js, "checks", &lines) {
		field(js, "claims", &lines) // older RobustEmbed tables wrote their claims as lines
	}
	for _, l := range lines {
		c, ok := legacyClaim(l)
		if !ok {
			continue // a summary line (e.g. check 13's share of cells), no verdict
		}
		c.Paper, c.Table = t.Paper, t.Table
		if kind.paperValue != nil {
			c.PaperValue = kind.paperValue(js, l)
		}
		t.Claims = append(t.Claims, c)
	}
	return t, nil
}

// verdictTail matches a check line's verdict: the last ": holds|fails|tie".
var verdictTail = regexp.MustCompile(`^(.*): (holds|fails|tie)$`)

// legacyClaim is a check line as a claim: its text up to the verdict.
// FLAT's check 11 lines hold two verdicts ("…: holds; AA(FLAT) ≥ AA(adv)
// − 1: holds"): the line is kept whole with the first.
func legacyClaim(line string) (Claim, bool) {
	if head, tail, ok := strings.Cut(line, "; AA(FLAT) ≥ AA(adv) − 1: "); ok {
		m := verdictTail.FindStringSubmatch(head)
		if m == nil {
			return Claim{}, false
		}
		return Claim{Claim: m[1] + " (and AA(FLAT) ≥ AA(adv) − 1: " + tail + ")", Verdict: m[2]}, true
	}
	m := verdictTail.FindStringSubmatch(line)
	if m == nil {
		return Claim{}, false
	}
	return Claim{Claim: m[1], Verdict: m[2]}, true
}

func ftmlReproTable(js map[string]json.RawMessage) string {
	var arch, ds string
	field(js, "arch", &arch)
	field(js, "dataset", &ds)
	name := "Table 1"
	if arch == "transformer" {
		name = "Table 2"
	}
	return fmt.Sprintf("%s, %s, %s", name, strings.ToUpper(ds), arch)
}

var ftmlLegacyLine = regexp.MustCompile(`^(\w+): FTML [0-9.]+ ≥ (\w+) `)

// ftmlLegacyPaper finds the paper's cells of an FTML check line.
func ftmlLegacyPaper(js map[string]json.RawMessage, line string) string {
	var arch string
	field(js, "arch", &arch)
	arch = map[string]string{"cnn": "cnn", "bilstm": "lstm", "transformer": "bert"}[arch]
	if strings.HasPrefix(line, "clean: FTML") {
		f, ok1 := ftmlPaperCell(arch, "ftml", "clean")
		s, ok2 := ftmlPaperCell(arch, "standard", "clean")
		if ok1 && ok2 {
			return fmt.Sprintf("FTML %.1f, standard %.1f", f, s)
		}
		return ""
	}
	if col, _, ok := strings.Cut(line, ": FTML"); ok && strings.Contains(line, "≥ 70") {
		if f, ok := ftmlPaperCell(arch, "ftml", col); ok {
			return fmt.Sprintf("FTML %.1f", f)
		}
		return ""
	}
	m := ftmlLegacyLine.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	f, ok1 := ftmlPaperCell(arch, "ftml", m[1])
	o, ok2 := ftmlPaperCell(arch, m[2], m[1])
	if !ok1 || !ok2 {
		return ""
	}
	return fmt.Sprintf("FTML %.1f, %s %.1f", f, m[2], o)
}

func ftmlLegacyDeviations(js map[string]json.RawMessage) []string {
	var quick bool
	var n, trainN, cleanN int
	field(js, "quick", &quick)
	field(js, "n", &n)
	field(js, "train_n", &trainN)
	field(js, "clean_n", &cleanN)
	var out []string
	if quick {
		out = append(out, "quick run: recipes cut to a few epochs at batch 16, halved GA/PSO/HLA search budgets")
	}
	if trainN > 0 {
		out = append(out, fmt.Sprintf("trained on a seeded %d of the training examples", trainN))
	}
	if n != 1000 {
		out = append(out, fmt.Sprintf("%d attacked test examples (paper 1,000)", n))
	}
	if cleanN > 0 {
		out = append(out, fmt.Sprintf("clean accuracy on %d seeded test examples", cleanN))
	}
	return out
}

func flatReproTable(js map[string]json.RawMessage) string {
	var ds, arch, atk string
	field(js, "dataset", &ds)
	field(js, "arch", &arch)
	field(js, "train_attack", &atk)
	return fmt.Sprintf("Tables 2/3/8, %s, %s, trained against %s", ds, arch, atk)
}

var flatLegacyAA = regexp.MustCompile(`^check 11, (\w+): AA\(FLAT\) [0-9.]+ > AA\((\w+)\)`)

// flatLegacyPaper finds the paper's cells of a FLAT check-11 or -12 line.
func flatLegacyPaper(js map[string]json.RawMessage, line string) string {
	var ds, arch, atk string
	field(js, "dataset", &ds)
	field(js, "arch", &arch)
	field(js, "train_attack", &atk)
	if strings.HasPrefix(line, "check 12:") {
		f := flatPaper(flatPaperSA, arch+"/flat/"+atk, ds, 1)
		b := flatPaper(flatPaperSA, arch+"/base", ds, 1)
		if f != nil && b != nil {
			return fmt.Sprintf("FLAT %.2f, base %.2f", f[0], b[0])
		}
		return ""
	}
	m := flatLegacyAA.FindStringSubmatch(line)
	if m == nil || m[1] != atk {
		return ""
	}
	f := flatPaper(flatPaperIG, atk+"/"+arch+"/flat", ds, 3)
	o := flatPaper(flatPaperIG, atk+"/"+arch+"/"+m[2], ds, 3)
	if f == nil || o == nil {
		return ""
	}
	return fmt.Sprintf("FLAT %.2f, %s %.2f", f[0], m[2], o[0])
}

func flatLegacyDeviations(js map[string]json.RawMessage) []string {
	var ds string
	var n int
	field(js, "dataset", &ds)
	field(js, "n", &n)
	if full := FLATAttackN(ds, -1); n != full {
		return []string{fmt.Sprintf("attacked the first %d test examples", n)}
	}
	return nil
}

// ReproductionMarkdown is the reproduction report of the tables: a
// summary of the verdicts per table, then one line per claim with the
// paper's numbers, ours over the trained instances, the margin with its SE
// and the verdict, and the deviations that apply.
func ReproductionMarkdown(tables []*ReproTable, command string) string {
	var b strings.Builder
	b.WriteString("# Reproduction report\n\n")
	b.WriteString("Generated by `textarmor bench reproduction` from the tables' `table.json` files (do not edit; rerun it): one line per claim of each paper the tables check, with the paper's numbers, ours, and the verdict. ")
	b.WriteString("A claim **holds** when its margin is beyond two standard errors in the claimed direction, **fails** beyond two SE against it, and is a **tie** in between. ")
	b.WriteString("Tables trained several times (`--seeds`) show each value as mean ± SD across the trained instances [min–max], and the margin's SE holds the seed-to-seed variance as well as the examples' sampling error (estimator: [benchmarks.md](benchmarks.md#standard-errors-and-several-trained-instances)). ")
	b.WriteString("Single-seed tables are marked so: one trained model per row, whose orderings of a few points can move with the training seed or the BLAS kernel.\n\n")
	if command != "" {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", command)
	}
	b.WriteString("| paper | table | trained instances | claims | holds | tie | fails |\n|---|---|---|---|---|---|---|\n")
	// Two tables of one paper and label (a variant of a run) are told
	// apart by their folders.
	seen := map[string]int{}
	for _, t := range tables {
		seen[t.Paper+"\x00"+t.Table]++
	}
	label := func(t *ReproTable) string {
		if seen[t.Paper+"\x00"+t.Table] < 2 {
			return t.Table
		}
		dir := filepath.Dir(t.Source)
		return fmt.Sprintf("%s, `%s`", t.Table, filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir))))
	}
	for _, t := range tables {
		count := map[string]int{}
		for _, c := range t.Claims {
			count[c.Verdict]++
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %d | %d |\n", t.Paper, label(t), seedsWord(t), len(t.Claims), count["holds"], count["tie"], count["fails"])
	}
	for _, t := range tables {
		fmt.Fprintf(&b, "\n## %s — %s (%s)\n\n", t.Paper, label(t), seedsWord(t))
		fmt.Fprintf(&b, "Source: `%s`.", t.Source)
		if t.Legacy {
			b.WriteString(" Written before structured claims: each line is the table's own check with the verdict it printed (some checks there are point comparisons, not the two-SE rule); the paper's numbers where the report knows them.")
		}
		b.WriteString("\n")
		if len(t.Deviations) > 0 {
			b.WriteString("\nDeviations of the whole table: " + strings.Join(t.Deviations, "; ") + ".\n")
		}
		if t.Legacy {
			b.WriteString("\n| claim (ours, as the table printed it) | paper | verdict |\n|---|---|---|\n")
			for _, c := range t.Claims {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(c.Claim), orDash(c.PaperValue), c.Verdict)
			}
			continue
		}
		b.WriteString("\n| claim | paper | ours | margin ± SE | verdict | deviations |\n|---|---|---|---|---|---|\n")
		for _, c := range t.Claims {
			d := c.Difference
			margin := fmt.Sprintf("%+.*f ± %.*f", digits(d.Mean), d.Mean, digits(d.Mean), d.SE)
			if c.Paired {
				margin += fmt.Sprintf(" (paired, %d ex.)", d.N)
			}
			if d.Seeds() > 1 {
				s := d.Spread()
				margin += fmt.Sprintf("; per seed %+.*f to %+.*f", digits(d.Mean), s.Min, digits(d.Mean), s.Max)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | **%s** | %s |\n", mdCell(c.Claim), orDash(c.PaperValue), mdCell(c.Ours), margin, c.Verdict, orDash(strings.Join(c.Deviations, "; ")))
		}
	}
	return b.String()
}

func seedsWord(t *ReproTable) string {
	if len(t.Seeds) <= 1 {
		return "single seed"
	}
	return fmt.Sprintf("%d seeds", len(t.Seeds))
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return mdCell(s)
}

// mdCell keeps a table cell on its row.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// ReadReproTables reads every path (table.json files or folders holding
// one), in the order given; a folder without a table.json of its own is
// searched one level down (an FTML table keeps it in ARCH/).
func ReadReproTables(paths []string) ([]*ReproTable, error) {
	var out []*ReproTable
	for _, p := range paths {
		files := []string{p}
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if _, err := os.Stat(filepath.Join(p, "table.json")); errors.Is(err, os.ErrNotExist) {
				files, _ = filepath.Glob(filepath.Join(p, "*", "table.json"))
				sort.Strings(files)
				if len(files) == 0 {
					return nil, fmt.Errorf("%s: no table.json in it or its sub-folders", p)
				}
			}
		}
		for _, f := range files {
			t, err := ReadReproTable(f)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// WriteReproduction writes the report of the tables at paths to out
// atomically and returns it.
func WriteReproduction(out string, paths []string, command string) (string, error) {
	tables, err := ReadReproTables(paths)
	if err != nil {
		return "", err
	}
	md := ReproductionMarkdown(tables, command)
	if out == "" {
		return md, nil
	}
	return md, checkpoint.WriteFileAtomic(out, []byte(md), 0o644)
}
