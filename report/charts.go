package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/render"
)

// chart is one chart of the page: its div's id and height and the
// ECharts option object go-echarts built, escaped for a <script>.
type chart struct {
	ID     string
	Height int
	Option template.JS
}

// charter numbers the charts of a page.
type charter struct{ n int }

func (c *charter) next() string {
	c.n++
	return "chart-" + strconv.Itoa(c.n)
}

// option turns a go-echarts chart into its option object. go-echarts
// writes the JSON with HTML escaping off, so a label holding "</script>"
// would end the script: json.HTMLEscape escapes <, > and & inside its
// strings (the JSON means the same).
func option(r render.Renderer) (template.JS, error) {
	raw := bytes.TrimSpace([]byte(r.RenderSnippet().Option))
	if !json.Valid(raw) {
		return "", fmt.Errorf("go-echarts wrote an option that is not JSON: %.200s", raw)
	}
	var b bytes.Buffer
	json.HTMLEscape(&b, raw)
	return template.JS(b.String()), nil
}

// Common chart settings: tooltips, a scrolling legend below the title, a
// grid that leaves room for the labels.
func common(title, subtitle string, trigger string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: trigger}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "48"}),
		charts.WithGridOpts(opts.Grid{Top: "100", Left: "40", Right: "30", Bottom: "40", ContainLabel: opts.Bool(true)}),
		charts.WithAnimation(false),
	}
}

// barChart draws rows (x) by series, values in percent; a missing value
// is ECharts' "-" (no bar).
func barChart(id, title, subtitle, xName, yName string, rows, series []string, value func(row, s string) (float64, bool)) (chart, error) {
	b := charts.NewBar()
	b.SetGlobalOptions(append(common(title, subtitle, "axis"),
		charts.WithInitializationOpts(opts.Initialization{ChartID: id}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, NameLocation: "middle", NameGap: 30, AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: rotation(rows)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName}))...)
	b.SetXAxis(rows)
	for _, s := range series {
		data := make([]opts.BarData, len(rows))
		for i, row := range rows {
			if v, ok := value(row, s); ok {
				data[i].Value = round(v)
			} else {
				data[i].Value = "-"
			}
		}
		// A group of one or two rows would get bars as wide as the chart.
		b.AddSeries(s, data, func(s *charts.SingleSeries) { s.BarMaxWidth = "48" })
	}
	o, err := option(b)
	return chart{ID: id, Height: 420, Option: o}, err
}

// rotation tilts category labels when there are many or long ones.
func rotation(rows []string) float64 {
	long := 0
	for _, r := range rows {
		long = max(long, len(r))
	}
	if len(rows)*long > 90 {
		return 20
	}
	return 0
}

// xy is a point of a line.
type xy struct{ X, Y float64 }

// lineSeries is a named line.
type lineSeries struct {
	Name   string
	Points []xy
	Dashed bool
}

// lineChart draws lines over a value x axis.
func lineChart(id, title, subtitle, xName, yName string, series []lineSeries) (chart, error) {
	l := charts.NewLine()
	l.SetGlobalOptions(append(common(title, subtitle, "item"),
		charts.WithInitializationOpts(opts.Initialization{ChartID: id}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: xName, NameLocation: "middle", NameGap: 28, Scale: opts.Bool(true)}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName, Scale: opts.Bool(true)}))...)
	for _, s := range series {
		data := make([]opts.LineData, len(s.Points))
		for i, p := range s.Points {
			data[i].Value = []float64{round(p.X), round(p.Y)}
		}
		var so []charts.SeriesOpts
		if s.Dashed {
			so = append(so, charts.WithLineStyleOpts(opts.LineStyle{Type: "dashed"}))
		}
		l.AddSeries(s.Name, data, so...)
	}
	o, err := option(l)
	return chart{ID: id, Height: 420, Option: o}, err
}

// round keeps four significant decimals: the page need not carry float
// noise, and the output stays stable across platforms.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// histogram bins values into at most about 20 bins of a round width
// (1, 2, 5 × a power of ten) from 0, and returns the bin labels and, per
// bin, the share of values in it (percent).
type histogram struct {
	Width float64
	Bins  int
}

func newHistogram(maxValue float64) histogram {
	if maxValue <= 0 {
		return histogram{Width: 1, Bins: 1}
	}
	raw := maxValue / 20
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	w := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			w = m * p
			break
		}
	}
	return histogram{Width: w, Bins: int(math.Floor(maxValue/w)) + 1}
}

func (h histogram) labels() []string {
	out := make([]string, h.Bins)
	for i := range out {
		out[i] = strconv.FormatFloat(float64(i)*h.Width, 'g', -1, 64) + "–" + strconv.FormatFloat(float64(i+1)*h.Width, 'g', -1, 64)
	}
	return out
}

// shares returns the percentage of vs in each bin.
func (h histogram) shares(vs []float64) []float64 {
	out := make([]float64, h.Bins)
	for _, v := range vs {
		i := min(h.Bins-1, max(0, int(v/h.Width)))
		out[i]++
	}
	for i := range out {
		out[i] = 100 * out[i] / float64(len(vs))
	}
	return out
}

// histChart draws one histogram per named series (the share of each
// series' values per bin, so runs of different sizes compare).
func histChart(id, title, subtitle, xName string, names []string, values [][]float64) (chart, error) {
	var top float64
	for _, vs := range values {
		if len(vs) > 0 {
			top = max(top, slices.Max(vs))
		}
	}
	h := newHistogram(top)
	labels := h.labels()
	shares := make(map[string][]float64, len(names))
	var kept []string
	for i, n := range names {
		if len(values[i]) > 0 {
			shares[n] = h.shares(values[i])
			kept = append(kept, n)
		}
	}
	return barChart(id, title, subtitle, xName, "% of examples", labels, kept, func(row, s string) (float64, bool) {
		return shares[s][slices.Index(labels, row)], true
	})
}
