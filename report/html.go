package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"

	"github.com/textarmor/textarmor/checkpoint"
)

//go:embed page.html.tmpl
var pageTemplate string

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"pct100": func(v float64) string {
		return strconv.FormatFloat(100*v, 'f', 1, 64)
	},
	"num": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
}).Parse(pageTemplate))

// page is what the template fills in.
type page struct {
	Title    string
	ECharts  template.JS
	Version  string
	Sources  []Source
	Skipped  []string
	Scores   []scoreSection
	Attacks  []attackRow
	Hists    []chart
	Curves   []chart
	Training []chart
	Examples []exampleSection
	Charts   []chart // all of them, drawn in order
}

type scoreSection struct {
	Chart   chart
	Title   string
	Metric  string
	Columns []string
	Rows    []scoreRow
}

type scoreRow struct {
	Name  string
	Cells []scoreCell
}

type scoreCell struct {
	Text, Title string
}

type attackRow struct {
	Label, Recipe, Dataset string
	Run                    *AttackRun
}

type exampleSection struct {
	Label, Recipe    string
	Shown, Succeeded int
	Examples         []Example
}

// WriteHTML writes the page: one HTML file, ECharts inlined, every text
// from the inputs escaped.
func (r *Report) WriteHTML(w io.Writer) error {
	p, err := r.page()
	if err != nil {
		return err
	}
	return pageTmpl.Execute(w, p)
}

// WriteFile writes the page to path atomically (a reader never sees half
// a page; a failed write leaves the old file).
func (r *Report) WriteFile(path string) error {
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		return err
	}
	return checkpoint.WriteFileAtomic(path, b.Bytes(), 0o644)
}

// NumCharts is how many charts the page draws.
func (r *Report) NumCharts() (int, error) {
	p, err := r.page()
	if err != nil {
		return 0, err
	}
	return len(p.Charts), nil
}

func (r *Report) page() (*page, error) {
	p := &page{Title: r.Title, ECharts: template.JS(echartsJS), Version: EChartsVersion, Sources: r.Sources, Skipped: r.Skipped}
	var ids charter
	if err := r.scoreCharts(p, &ids); err != nil {
		return nil, err
	}
	if err := r.attackCharts(p, &ids); err != nil {
		return nil, err
	}
	if err := r.curveCharts(p, &ids); err != nil {
		return nil, err
	}
	if err := r.trainCharts(p, &ids); err != nil {
		return nil, err
	}
	for _, s := range p.Scores {
		p.Charts = append(p.Charts, s.Chart)
	}
	p.Charts = append(p.Charts, p.Hists...)
	p.Charts = append(p.Charts, p.Curves...)
	p.Charts = append(p.Charts, p.Training...)
	return p, nil
}

// scoreCharts draws a bar chart and a table per group of scores (a
// dataset of a table, the pooled attack files of a dataset).
func (r *Report) scoreCharts(p *page, ids *charter) error {
	type key struct{ source, group, metric string }
	var keys []key
	for _, s := range r.Scores {
		if k := (key{s.Source, s.Group, s.Metric}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		var rows, cols []string
		vals := map[[2]string]Score{}
		for _, s := range r.Scores {
			if (key{s.Source, s.Group, s.Metric}) != k {
				continue
			}
			if !slices.Contains(rows, s.Row) {
				rows = append(rows, s.Row)
			}
			if !slices.Contains(cols, s.Column) {
				cols = append(cols, s.Column)
			}
			vals[[2]string{s.Row, s.Column}] = s
		}
		title := k.group
		sub := "pooled over the files read"
		if k.source != "" {
			sub = "from " + r.label(k.source)
		}
		c, err := barChart(ids.next(), title, sub, "", k.metric, rows, cols, func(row, col string) (float64, bool) {
			s, ok := vals[[2]string{row, col}]
			return s.Value, ok
		})
		if err != nil {
			return err
		}
		sec := scoreSection{Chart: c, Title: title + " — " + sub, Metric: k.metric, Columns: cols}
		for _, row := range rows {
			sr := scoreRow{Name: row}
			for _, col := range cols {
				s, ok := vals[[2]string{row, col}]
				switch {
				case !ok:
					sr.Cells = append(sr.Cells, scoreCell{Text: "—"})
				case s.N > 0:
					sr.Cells = append(sr.Cells, scoreCell{Text: strconv.FormatFloat(s.Value, 'f', 1, 64), Title: fmt.Sprintf("n = %d", s.N)})
				default:
					sr.Cells = append(sr.Cells, scoreCell{Text: strconv.FormatFloat(s.Value, 'f', 1, 64)})
				}
			}
			sec.Rows = append(sec.Rows, sr)
		}
		p.Scores = append(p.Scores, sec)
	}
	return nil
}

// attackCharts lists the results files and draws the distributions of
// the perturbed-word share and of the queries.
func (r *Report) attackCharts(p *page, ids *charter) error {
	if len(r.Attacks) == 0 {
		return nil
	}
	var names []string
	var pct, queries [][]float64
	for i := range r.Attacks {
		a := &r.Attacks[i]
		label := r.label(a.Path)
		p.Attacks = append(p.Attacks, attackRow{Label: label, Recipe: a.Recipe, Dataset: a.Dataset, Run: a})
		names = append(names, label)
		pct = append(pct, a.PerturbedPct)
		q := make([]float64, len(a.Queries))
		for j, v := range a.Queries {
			q[j] = float64(v)
		}
		queries = append(queries, q)
		if len(a.Examples) > 0 {
			p.Examples = append(p.Examples, exampleSection{Label: label, Recipe: a.Recipe, Shown: len(a.Examples),
				Succeeded: a.Summary.Successful, Examples: a.Examples})
		}
	}
	if slices.ContainsFunc(pct, func(v []float64) bool { return len(v) > 0 }) {
		c, err := histChart(ids.next(), "Perturbed words", "share of the words substituted, over each file's successful attacks", "% of words perturbed", names, pct)
		if err != nil {
			return err
		}
		p.Hists = append(p.Hists, c)
	}
	if slices.ContainsFunc(queries, func(v []float64) bool { return len(v) > 0 }) {
		c, err := histChart(ids.next(), "Queries", "distinct inputs the model scored, over each file's attacked (not skipped) examples", "queries", names, queries)
		if err != nil {
			return err
		}
		p.Hists = append(p.Hists, c)
	}
	return nil
}

// curveCharts draws accuracy against ε, a chart per group.
func (r *Report) curveCharts(p *page, ids *charter) error {
	type key struct{ source, group string }
	var keys []key
	for _, c := range r.Curves {
		if k := (key{c.Source, c.Group}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		var series []lineSeries
		for _, c := range r.Curves {
			if (key{c.Source, c.Group}) != k {
				continue
			}
			s := lineSeries{Name: c.Series}
			for _, pt := range c.Points {
				s.Points = append(s.Points, xy{pt.Eps, pt.Accuracy})
			}
			series = append(series, s)
		}
		sub := "ε 0 is the clean accuracy"
		if k.source != "" {
			sub = "from " + r.label(k.source) + "; " + sub
		}
		c, err := lineChart(ids.next(), "Accuracy against ε: "+k.group, sub, "ε", "accuracy (%)", series)
		if err != nil {
			return err
		}
		p.Curves = append(p.Curves, c)
	}
	return nil
}

// trainCharts draws the training loss and the accuracies per epoch.
func (r *Report) trainCharts(p *page, ids *charter) error {
	if len(r.Logs) == 0 {
		return nil
	}
	var loss, acc []lineSeries
	for _, l := range r.Logs {
		label := r.label(l.Path)
		for k, run := range l.Runs {
			name := label
			if len(l.Runs) > 1 {
				name += " (run " + strconv.Itoa(k+1) + ")"
			}
			ls, tr, dev := lineSeries{Name: name}, lineSeries{Name: name + " train", Dashed: true}, lineSeries{Name: name + " dev"}
			hasDev := false
			for _, e := range run {
				x := float64(e.Epoch)
				ls.Points = append(ls.Points, xy{x, e.TrainLoss})
				tr.Points = append(tr.Points, xy{x, 100 * e.TrainAcc})
				dev.Points = append(dev.Points, xy{x, 100 * e.DevAcc})
				hasDev = hasDev || e.DevAcc != 0
			}
			loss = append(loss, ls)
			acc = append(acc, tr)
			if hasDev {
				acc = append(acc, dev)
			}
		}
	}
	c, err := lineChart(ids.next(), "Training loss", "per epoch (the objective's total, defense terms included)", "epoch", "loss", loss)
	if err != nil {
		return err
	}
	p.Training = append(p.Training, c)
	c, err = lineChart(ids.next(), "Training and dev accuracy", "per epoch; dashed: on the training batches", "epoch", "accuracy (%)", acc)
	if err != nil {
		return err
	}
	p.Training = append(p.Training, c)
	return nil
}
