package explain

import (
	"math"
	"runtime"
	"sync"

	"github.com/textarmor/textarmor/ag"
	"github.com/textarmor/textarmor/nn"
	"github.com/textarmor/textarmor/tensor"
)

// Exact fast paths for the Kim CNN. A convolution is linear in its input
// rows, so once every input row x_j (embedding, times φ with a word mask and
// the group's scale with a group mask) is projected through each width's
// weights, Y_j = x_j·W [w·F], a window's pre-activation is
// bias + Σ_k Y_{t+k}[block k]:
//
//   - LIME's samples are subsequences of one text: each costs O(n·Σw·F)
//     additions instead of a full forward pass.
//   - IG's path points are α·x: the pre-activations are α·Z + bias with Z
//     the window sums, and the input gradient summed over the steps is the
//     summed window gradient G pushed back through W, so
//     IG_j = (1/m) Σ_w Σ_k G_w[j−k]·Y_j[block k] needs no backward GEMM.
//
// Both give the tape's numbers up to float rounding (tests check it) and
// only read the model, so they are safe for concurrent use.

// cnnOf returns the model's CNN encoder, or nil.
func cnnOf(m *nn.Classifier) *nn.CNN {
	c, _ := m.Enc.(*nn.CNN)
	if c == nil || m.Out == nil || len(c.Convs) == 0 || !m.Plain() {
		return nil
	}
	return c
}

// inputRows returns the encoder input rows [len(ids), D] for ids (id map,
// embedding, word and group masks in inference mode), as Forward computes
// them.
func inputRows(m *nn.Classifier, ids []int32) []float32 {
	t := ag.NewTape()
	t.NoGrad = true
	b := &nn.Batch{IDs: ids, B: 1, L: len(ids), Lengths: []int{len(ids)}}
	return m.MaskInput(t, m.Embed(t, b), m.MapIDs(ids)).Data()
}

// project returns, per convolution, rows·W [n, w·F] (rows [n, D]).
func project(c *nn.CNN, rows []float32, n, d int) [][]float32 {
	ys := make([][]float32, len(c.Convs))
	for i, conv := range c.Convs {
		wf := conv.W.Value.Shape[1]
		ys[i] = make([]float32, n*wf)
		tensor.Gemm(false, false, n, wf, d, 1, rows, d, conv.W.Value.Data, wf, 0, ys[i], wf)
	}
	return ys
}

// headProbs writes softmax(feat·W + b) into p.
func headProbs(m *nn.Classifier, feat []float32, p []float32) {
	w, b := m.Out.W.Value.Data, m.Out.B.Value.Data
	c := len(b)
	copy(p, b)
	for i, v := range feat {
		if v == 0 {
			continue
		}
		row := w[i*c : (i+1)*c]
		for k := range p {
			p[k] += v * row[k]
		}
	}
	ag.SoftmaxRows(p, c)
}

// cnnLIMEProbs returns the class probabilities of the subsequences of ids
// kept by each mask in z, as Predict would.
func cnnLIMEProbs(m *nn.Classifier, c *nn.CNN, ids []int32, z [][]bool) [][]float32 {
	n, d := len(ids), m.Emb.Dim()
	// Row n is the padding token, which fills texts shorter than a window.
	all := append(append([]int32(nil), ids...), nn.PadID)
	ys := project(c, inputRows(m, all), n+1, d)
	minLen := max(c.MinLen(), 1)
	classes := m.Cfg.NumClasses
	out := make([][]float32, len(z))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(z)/64))
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			feat := make([]float32, c.OutDim())
			rowOf := make([]int, 0, max(n, minLen))
			var win []float32
			for s := w; s < len(z); s += workers {
				rowOf = rowOf[:0]
				for j, k := range z[s] {
					if k {
						rowOf = append(rowOf, j)
					}
				}
				kept := max(len(rowOf), 1)
				for len(rowOf) < max(kept, minLen) {
					rowOf = append(rowOf, n)
				}
				l := len(rowOf)
				at := 0
				for ci, conv := range c.Convs {
					wd := conv.Width
					wf := conv.W.Value.Shape[1]
					f := wf / wd
					bias := conv.B.Value.Data
					y := ys[ci]
					o := feat[at : at+f]
					at += f
					if cap(win) < f {
						win = make([]float32, f)
					}
					win = win[:f]
					valid := max(1, min(kept-wd+1, l-wd+1))
					for t := 0; t < valid; t++ {
						copy(win, bias)
						for k := 0; k < wd; k++ {
							src := y[rowOf[t+k]*wf+k*f : rowOf[t+k]*wf+(k+1)*f]
							for q, v := range src {
								win[q] += v
							}
						}
						if t == 0 {
							copy(o, win)
							continue
						}
						for q, v := range win {
							o[q] = max(o[q], v)
						}
					}
					for q, v := range o {
						o[q] = max(v, 0)
					}
				}
				p := make([]float32, classes)
				headProbs(m, feat, p)
				out[s] = p
			}
		}(w)
	}
	wg.Wait()
	return out
}

// cnnIG is IG for the CNN (see IG).
func cnnIG(m *nn.Classifier, c *nn.CNN, ids []int32, classes []int, steps int) [][]float64 {
	n, d := len(ids), m.Emb.Dim()
	l := max(n, c.MinLen())
	ys := project(c, inputRows(m, ids), n, d)
	nc := m.Cfg.NumClasses
	wh := m.Out.W.Value.Data
	type conv struct {
		wd, f, valid int
		z            []float64 // [valid, F] window sums without bias
		bias         []float32
		g            [][]float64 // per requested class: [valid, F] summed window gradients
		pooled       []float64
		arg          []int
	}
	convs := make([]conv, len(c.Convs))
	for ci, cv := range c.Convs {
		wd := cv.Width
		wf := cv.W.Value.Shape[1]
		f := wf / wd
		valid := max(1, min(n-wd+1, l-wd+1))
		z := make([]float64, valid*f)
		y := ys[ci]
		for t := 0; t < valid; t++ {
			for k := 0; k < wd; k++ {
				if t+k >= n { // padding rows are zero on the IG path
					break
				}
				src := y[(t+k)*wf+k*f : (t+k)*wf+(k+1)*f]
				for q, v := range src {
					z[t*f+q] += float64(v)
				}
			}
		}
		g := make([][]float64, len(classes))
		for i := range g {
			g[i] = make([]float64, valid*f)
		}
		convs[ci] = conv{wd: wd, f: f, valid: valid, z: z, bias: cv.B.Value.Data, g: g,
			pooled: make([]float64, f), arg: make([]int, f)}
	}
	feat := make([]float32, c.OutDim())
	probs := make([]float32, nc)
	dlogit := make([]float64, nc)
	for s := 1; s <= steps; s++ {
		a := float64(float32(s) / float32(steps))
		at := 0
		for ci := range convs {
			cv := &convs[ci]
			for q := 0; q < cv.f; q++ {
				best, arg := math.Inf(-1), 0
				for t := 0; t < cv.valid; t++ {
					if v := a*cv.z[t*cv.f+q] + float64(cv.bias[q]); v > best {
						best, arg = v, t
					}
				}
				cv.pooled[q], cv.arg[q] = best, arg
				feat[at+q] = float32(max(best, 0))
			}
			at += cv.f
		}
		headProbs(m, feat, probs)
		for i, cl := range classes {
			pc := float64(probs[cl])
			for k := range dlogit {
				dlogit[k] = -pc * float64(probs[k])
			}
			dlogit[cl] += pc
			at := 0
			for ci := range convs {
				cv := &convs[ci]
				for q := 0; q < cv.f; q++ {
					if cv.pooled[q] <= 0 {
						continue
					}
					row := wh[(at+q)*nc : (at+q+1)*nc]
					var df float64
					for k, v := range row {
						df += float64(v) * dlogit[k]
					}
					cv.g[i][cv.arg[q]*cv.f+q] += df
				}
				at += cv.f
			}
		}
	}
	out := make([][]float64, len(classes))
	for i := range classes {
		sc := make([]float64, n)
		for ci := range convs {
			cv := &convs[ci]
			wf := cv.wd * cv.f
			y := ys[ci]
			for j := 0; j < n; j++ {
				for k := 0; k < cv.wd; k++ {
					t := j - k
					if t < 0 || t >= cv.valid {
						continue
					}
					g := cv.g[i][t*cv.f : (t+1)*cv.f]
					yr := y[j*wf+k*cv.f : j*wf+(k+1)*cv.f]
					var acc float64
					for q, v := range g {
						acc += v * float64(yr[q])
					}
					sc[j] += acc
				}
			}
		}
		for j := range sc {
			sc[j] /= float64(steps)
		}
		out[i] = sc
	}
	return out
}
