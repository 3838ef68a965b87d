package explain

import (
	"fmt"
	"math"
)

// ColorWord wraps word in a 256-colour ANSI background: green for positive
// scores, red for negative, intensity by |score|/maxAbs.
func ColorWord(word string, score, maxAbs float64) string {
	if maxAbs == 0 {
		return word
	}
	r := math.Min(1, math.Abs(score)/maxAbs)
	level := int(math.Round(r * 4)) // 0..4
	greens := []int{255, 194, 157, 120, 46}
	reds := []int{255, 224, 217, 210, 196}
	c := greens[level]
	if score < 0 {
		c = reds[level]
	}
	return fmt.Sprintf("\x1b[48;5;%dm\x1b[30m%s\x1b[0m", c, word)
}
