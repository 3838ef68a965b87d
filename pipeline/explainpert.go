package pipeline

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/explain"
	"github.com/textarmor/textarmor/model"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
	"github.com/textarmor/textarmor/text"
)

// ExplainPerturbationConfig configures ExplainPerturbation (`textarmor
// explain --perturbation METHOD`): SPGD's heat map (spgd.md §3.2, §6).
type ExplainPerturbationConfig struct {
	Model string
	// Method is advt, iadvt or spgd; Eps, when positive, replaces the ε
	// the classifier was trained with (or the method's default).
	Method string
	Eps    float64
	Texts  []string
}

// PerturbedWord is one word of a perturbed text.
type PerturbedWord struct {
	Word string `json:"word"`
	// Norm is ‖d_t‖, the heat map's colour.
	Norm float64 `json:"norm"`
	// Toward is the neighbour the word moves towards: SPGD's chosen one,
	// for the others the neighbour whose direction is most aligned with
	// d_t; "" when the word does not move or has no neighbours.
	Toward string `json:"toward,omitempty"`
	// Nearest is the vocabulary word nearest (cosine) to the moved
	// embedding e_t + d_t: at the usual ε, almost always the word itself.
	Nearest string `json:"nearest"`
}

// PerturbedText is one text's perturbation, read word by word.
type PerturbedText struct {
	Text  string          `json:"text"`
	Label string          `json:"label"` // the class the perturbation argues against (the prediction)
	Words []PerturbedWord `json:"words"`
}

// ExplainPerturbation computes each text's perturbation against the
// model's own prediction (evaluation mode) and reads it as words.
func ExplainPerturbation(ctx context.Context, c ExplainPerturbationConfig) ([]PerturbedText, error) {
	if c.Model == "" {
		return nil, configErrorf("--model is required")
	}
	if err := CheckRules(Rule{isFinite(c.Eps) && c.Eps >= 0, "eps", c.Eps, "≥ 0 (0 = the model's own)"}); err != nil {
		return nil, err
	}
	m, err := model.Load(c.Model)
	if err != nil {
		return nil, err
	}
	if err := refusePairModel(m, "explaining perturbations"); err != nil {
		return nil, err
	}
	adv, err := perturbationObjective(m, c.Method, nil, c.Eps)
	if err != nil {
		return nil, err
	}
	emb, words := m.Net.Emb.W.Value, m.Vocab.Words()
	if m.Pieces != nil { // a transformer's rows are word pieces
		words = m.Pieces.Vocab()
	}
	dim := emb.Shape[1]
	var out []PerturbedText
	for _, s := range c.Texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ids := m.Encode(s)
		pred := m.PredictTexts([]string{s})[0]
		pt := PerturbedText{Text: s, Label: pred.Label}
		if len(ids) == 0 {
			out = append(out, pt)
			continue
		}
		b := nn.MakeBatch([][]int32{ids}, []int{pred.Class}, m.Net.Enc.MinLen())
		x := m.Net.EmbedInput(ag.NewTape(), b).Value
		p, err := adv.Perturb(m.Net, b, x, 0, false)
		if err != nil {
			return nil, err
		}
		var nbs [][]int32
		if adv.Neighbors != nil {
			nbs = adv.Neighbors.Of(m.Net.MapIDs(ids))
		}
		for t, id := range ids {
			d := p.D.Data[t*dim : (t+1)*dim]
			w := PerturbedWord{Word: words[id], Norm: tensor.Norm(d)}
			moved := make([]float32, dim)
			for j := range moved {
				moved[j] = x.Data[t*dim+j] + d[j]
			}
			w.Nearest = words[nearestRow(emb.Data, dim, moved)]
			switch {
			case w.Norm == 0:
			case p.Toward != nil && p.Toward[0][t] >= 0:
				w.Toward = words[p.Toward[0][t]]
			case nbs != nil:
				if n := alignedNeighbor(emb.Data, dim, id, nbs[t], d); n >= 0 {
					w.Toward = words[n]
				}
			}
			pt.Words = append(pt.Words, w)
		}
		out = append(out, pt)
	}
	return out, nil
}

// nearestRow is the real word (not <pad> or <unk>) whose row of table is
// nearest v by cosine.
func nearestRow(table []float32, dim int, v []float32) int32 {
	best, bestCos := int32(text.UnkID), math.Inf(-1)
	nv := tensor.Norm(v)
	for r := 2; r*dim < len(table); r++ {
		row := table[r*dim : (r+1)*dim]
		var dot float64
		for j, x := range row {
			dot += float64(x) * float64(v[j])
		}
		if n := tensor.Norm(row) * nv; n > 0 && dot/n > bestCos {
			best, bestCos = int32(r), dot/n
		}
	}
	return best
}

// alignedNeighbor is the neighbour n of word id whose direction V[n]−V[id]
// has the largest cosine with d (-1 without one).
func alignedNeighbor(table []float32, dim int, id int32, nbs []int32, d []float32) int32 {
	best, bestCos := int32(-1), math.Inf(-1)
	u := make([]float32, dim)
	for _, n := range nbs {
		for j := range u {
			u[j] = table[int(n)*dim+j] - table[int(id)*dim+j]
		}
		var dot float64
		for j, x := range u {
			dot += float64(x) * float64(d[j])
		}
		if nn := tensor.Norm(u) * tensor.Norm(d); nn > 0 && dot/nn > bestCos {
			best, bestCos = n, dot/nn
		}
	}
	return best
}

// Format writes the text with each word coloured by ‖d_t‖ (256-colour
// ANSI, when color), then a line per moved word: the neighbour it moves
// towards, ‖d_t‖, and the nearest word after the move.
func (pt PerturbedText) Format(method string, color bool) string {
	var maxNorm float64
	for _, w := range pt.Words {
		maxNorm = math.Max(maxNorm, w.Norm)
	}
	parts := make([]string, len(pt.Words))
	for i, w := range pt.Words {
		parts[i] = w.Word
		if color {
			parts[i] = explain.ColorWord(w.Word, -w.Norm, maxNorm)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s perturbation against %s: %s\n", method, pt.Label, strings.Join(parts, " "))
	for _, w := range pt.Words {
		if w.Toward != "" {
			fmt.Fprintf(&b, "  %-20s → %-20s ‖d‖ %.4f; nearest word after the move: %s\n", w.Word, w.Toward, w.Norm, w.Nearest)
		}
	}
	return b.String()
}
