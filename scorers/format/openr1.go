package format

import (
	"strings"

	"github.com/rewardd/rewardd/scorers"
)

// openR1 scores as open-r1's format_reward and tag_count_reward do, for any
// list of tags laid out as open-r1 lays out think and answer.
type openR1 struct {
	// first is the text's required start ("<think>\n"); seps[i] joins block
	// i to block i+1 ("\n</think>\n<answer>\n"); last closes the last block
	// ("\n</answer>").
	first string
	seps  []string
	last  string
	// counted are tag_count's strings, each worth 1/len(counted), with the
	// reason given when one is not there exactly once.
	counted []string
	missing []string
	// noMatch says why format gives 0.
	noMatch string
}

func newOpenR1(tags []string) *openR1 {
	o := &openR1{first: "<" + tags[0] + ">\n", last: "\n</" + tags[len(tags)-1] + ">"}
	pattern := "^" + o.first
	for i := 0; i+1 < len(tags); i++ {
		sep := "\n</" + tags[i] + ">\n<" + tags[i+1] + ">\n"
		o.seps = append(o.seps, sep)
		pattern += ".*?" + sep
	}
	pattern += ".*?" + o.last + "$"
	o.noMatch = "does not match open-r1's " + strings.ReplaceAll(pattern, "\n", `\n`)
	for i, t := range tags {
		open, close := "\n<"+t+">\n", "\n</"+t+">\n"
		if i == 0 {
			open = o.first
		}
		if i == len(tags)-1 {
			close = o.last
		}
		for _, c := range []string{open, close} {
			o.counted = append(o.counted, c)
			o.missing = append(o.missing, strings.ReplaceAll(c, "\n", `\n`)+" not present exactly once")
		}
	}
	return o
}

// format is format_reward: re.match(pattern, text, re.DOTALL|re.MULTILINE).
// The lazy .*? gaps can take any text, so the pattern matches exactly when
// each literal occurs, in order and without overlap, after the previous one;
// taking each at its earliest place leaves the most room for the rest. The
// last one must end the text or be followed by a newline.
func (o *openR1) format(text string) scorers.Result {
	if !strings.HasPrefix(text, o.first) {
		return scorers.ScoreWhy(0, o.noMatch)
	}
	at := len(o.first)
	for _, sep := range o.seps {
		i := strings.Index(text[at:], sep)
		if i < 0 {
			return scorers.ScoreWhy(0, o.noMatch)
		}
		at += i + len(sep)
	}
	for {
		i := strings.Index(text[at:], o.last)
		if i < 0 {
			return scorers.ScoreWhy(0, o.noMatch)
		}
		end := at + i + len(o.last)
		if end == len(text) || text[end] == '\n' {
			return scorers.Score(1)
		}
		at += i + 1
	}
}

// tagCount is tag_count_reward: a share for each string counted exactly once.
func (o *openR1) tagCount(text string) scorers.Result {
	once, reason := 0, ""
	for i, c := range o.counted {
		if strings.Count(text, c) == 1 {
			once++
		} else if reason == "" {
			reason = o.missing[i]
		}
	}
	return scorers.ScoreWhy(float64(once)/float64(len(o.counted)), reason)
}
