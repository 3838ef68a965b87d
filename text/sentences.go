package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitSentences splits running text into sentences: after '.', '!' or
// '?' (and any closing quotes or brackets right after it) when white space
// and then an upper-case letter, a digit or an opening quote follow. HTML
// line breaks ("<br />", as in IMDB reviews) and runs of white space become
// single spaces. It is a light rule, enough to cut reviews into training
// sentences; abbreviations such as "Mr. Smith" are split too.
func SplitSentences(s string) []string {
	s = strings.NewReplacer("<br />", " ", "<br/>", " ", "<br>", " ").Replace(s)
	s = strings.Join(strings.Fields(s), " ")
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		end := i
		for end < len(s) && strings.ContainsRune(".!?\"')]»”’", rune(s[end])) {
			end++
		}
		if end+1 < len(s) && s[end] == ' ' {
			next, _ := utf8.DecodeRuneInString(s[end+1:])
			if unicode.IsUpper(next) || unicode.IsDigit(next) || strings.ContainsRune("\"'“‘(", next) {
				if sent := strings.TrimSpace(s[start:end]); sent != "" {
					out = append(out, sent)
				}
				start = end + 1
			}
		}
		i = end
	}
	if sent := strings.TrimSpace(s[start:]); sent != "" {
		out = append(out, sent)
	}
	return out
}
