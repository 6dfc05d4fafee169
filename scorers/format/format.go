// Package format implements the format scorer kind: it scores the structure
// of a completion, not its content.
//
// Modes:
//
//   - strict: the whole completion, after trimming outer whitespace, is one
//     block per tag in the order of Tags (<think>…</think><answer>…</answer>
//     by default), each tag opened and closed exactly once, only whitespace
//     between blocks. Score 1, or 0 with a reason naming the first problem.
//     A block may be empty. A completion that does not start with the first
//     tag scores 0 for that ("does not start with <think>"), without the
//     rest of it being read.
//   - partial: open-r1's tag_count partial credit. Each of the 2·len(Tags)
//     open and close tags present exactly once earns 1/(2·len(Tags)): 0.25
//     each for <think>, </think>, <answer>, </answer>. Unlike open-r1, which
//     counts "<think>\n", "\n</think>\n", "\n<answer>\n" and "\n</answer>",
//     the tags are counted bare, without the newlines around them, and any
//     list of tags may be used (compat: openr1 counts open-r1's strings).
//   - json: the completion, or its last ```json fenced block if it has one,
//     is JSON (a JSON object holding every one of RequiredKeys at its top
//     level, when they are given). Score 1, or 0 with a reason.
//
// With Compat "openr1", strict and partial give open-r1's exact numbers
// (src/open_r1/rewards.py), newlines included:
//
//   - strict is format_reward: re.match of
//     ^<think>\n.*?\n</think>\n<answer>\n.*?\n</answer>$ with DOTALL and
//     MULTILINE. The completion is not trimmed; it starts with "<think>\n",
//     some "\n</think>\n<answer>\n" follows, then some "\n</answer>" that
//     ends the text or a line (MULTILINE's $), so text may follow it on
//     later lines. A block may hold anything, tags included.
//   - partial is tag_count_reward: 1/(2·len(Tags)) for each of "<think>\n",
//     "\n</think>\n", "\n<answer>\n" and "\n</answer>" counted exactly once
//     (non-overlapping counts, as Python's str.count).
//
// Other tag lists follow the same layout: the first open tag starts the text
// and ends with a newline, every other tag string is on its own line, and the
// last close tag needs only the newline before it.
//
// Tags are matched case-sensitively, as open-r1 does.
package format

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rewardd/rewardd/scorers"
)

// Params configures a format function.
type Params struct {
	// Mode is strict (the default), partial or json.
	Mode string `yaml:"mode,omitempty"`
	// Tags are the tag names in their required order; default think, answer.
	// Strict and partial modes only.
	Tags []string `yaml:"tags,omitempty"`
	// RequiredKeys are keys the JSON object must have at its top level.
	// JSON mode only.
	RequiredKeys []string `yaml:"required_keys,omitempty"`
	// Compat is "" (rewardd's rules) or "openr1" (open-r1's newline
	// semantics, see the package comment). Strict and partial modes only.
	Compat string `yaml:"compat,omitempty"`
}

// OpenR1 is the Compat value for open-r1's numbers.
const OpenR1 = "openr1"

// Modes.
const (
	Strict  = "strict"
	Partial = "partial"
	JSON    = "json"
)

// Scorer scores the format of completions. It is safe for concurrent use.
type Scorer struct {
	p    Params // with its defaults
	mode string
	// tags[i] is the i-th tag's open and close strings with the reasons
	// about them, prepared once so that scoring does not format strings.
	tags []tag
	// order explains tags out of order.
	order string
	keys  []string
	// missingKey[i] explains the absence of keys[i].
	missingKey []string
	// openr1 holds the strings open-r1 looks for, when Compat is openr1.
	openr1 *openR1
}

type tag struct {
	name        string // answer
	open, close string // <answer>, </answer>
	// missing and repeated explain a count of 0 or more than 1, for open
	// ([0]) and close ([1]).
	missing, repeated [2]string
	// before is the reason for a completion that does not start with the
	// first tag; after for text after the last; between for text between
	// this tag's block and the next one's.
	before, after, between string
}

// New returns a scorer for p. Errors are *scorers.ParamError naming the key
// at fault.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	p.Mode, _ = scorers.Choice(&bad, "mode", p.Mode, Strict, Strict, Partial, JSON)
	if p.Mode == JSON {
		if p.Tags != nil {
			bad.Add("tags", errors.New("is not used in json mode"))
		}
	} else {
		if p.RequiredKeys != nil {
			bad.Addf("required_keys", "is only used in json mode, not %s", p.Mode)
		}
		if p.Tags == nil {
			p.Tags = []string{"think", "answer"}
		}
		if len(p.Tags) == 0 {
			bad.Add("tags", errors.New("is empty"))
		}
	}
	switch p.Compat {
	case "":
	case OpenR1:
		if p.Mode == JSON {
			bad.Addf("compat", "%q is for strict and partial modes, not json", OpenR1)
		}
	default:
		bad.Addf("compat", "unknown value %q (want %q or nothing)", p.Compat, OpenR1)
	}
	s := &Scorer{p: p, mode: p.Mode}
	if p.Mode == JSON {
		s.keys = p.RequiredKeys
		for _, k := range p.RequiredKeys {
			s.missingKey = append(s.missingKey, fmt.Sprintf("key %q missing", k))
		}
	}
	seen := make(map[string]bool, len(p.Tags))
	for i, name := range p.Tags { // none in json mode
		switch {
		case name == "":
			bad.Addf("tags", "tag %d is empty", i+1)
		case strings.ContainsAny(name, "<>"):
			bad.Addf("tags", "tag %q holds < or >; give the name only", name)
		case strings.HasPrefix(name, "/"):
			bad.Addf("tags", "tag %q starts with /; give the name only", name)
		case seen[name]:
			bad.Addf("tags", "tag %q is listed twice", name)
		}
		seen[name] = true
		t := tag{name: name, open: "<" + name + ">", close: "</" + name + ">"}
		t.missing = [2]string{"tag " + t.open + " missing", "tag " + t.close + " missing"}
		t.repeated = [2]string{"tag " + t.open + " repeated", "tag " + t.close + " repeated"}
		t.before, t.after = "does not start with "+t.open, "text after "+t.close
		if i > 0 {
			s.tags[i-1].between = "text between " + s.tags[i-1].close + " and " + t.open
		}
		s.tags = append(s.tags, t)
		s.order += t.open + "…" + t.close
	}
	if len(s.tags) > 0 {
		s.order = "tags out of order (want " + s.order + ")"
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	if p.Compat == OpenR1 {
		s.openr1 = newOpenR1(p.Tags)
	}
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in. It shares
// their lists with s: the caller must not change them.
func (s *Scorer) Params() Params { return s.p }

// Score scores the completion's format. It does not use ctx: its work is a
// scan of the completion.
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	switch {
	case s.openr1 != nil && s.mode == Partial:
		return s.openr1.tagCount(r.Completion)
	case s.openr1 != nil:
		return s.openr1.format(r.Completion)
	}
	switch s.mode {
	case Partial:
		return s.partial(r.Completion)
	case JSON:
		return s.scoreJSON(r.Completion)
	default:
		return s.strict(r.Completion)
	}
}

// mark records how often one tag string occurs and where it first does.
type mark struct{ count, pos int }

// maxStackTags is the number of tags whose marks fit on the stack.
const maxStackTags = 8

// scan fills marks[2i] and marks[2i+1] with the occurrences of tags[i]'s open
// and close strings in text. It visits each '<' of text once.
func (s *Scorer) scan(text string, marks []mark) {
	clear(marks)
	for i := 0; ; i++ {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 {
			return
		}
		i += j
		rest, closing := text[i+1:], 0
		if strings.HasPrefix(rest, "/") {
			rest, closing = rest[1:], 1
		}
		for k := range s.tags {
			name := s.tags[k].name
			if len(rest) > len(name) && rest[len(name)] == '>' && rest[:len(name)] == name {
				m := &marks[2*k+closing]
				if m.count == 0 {
					m.pos = i
				}
				m.count++
				break
			}
		}
	}
}

// marks returns a slice for scan, on the stack when tags are few.
func (s *Scorer) marks(buf *[2 * maxStackTags]mark) []mark {
	if n := 2 * len(s.tags); n <= len(buf) {
		return buf[:n]
	}
	return make([]mark, 2*len(s.tags))
}

func (s *Scorer) strict(text string) scorers.Result {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, s.tags[0].open) {
		return scorers.ScoreWhy(0, s.tags[0].before)
	}
	var buf [2 * maxStackTags]mark
	marks := s.marks(&buf)
	s.scan(text, marks)
	for i, m := range marks {
		switch {
		case m.count == 0:
			return scorers.ScoreWhy(0, s.tags[i/2].missing[i%2])
		case m.count > 1:
			return scorers.ScoreWhy(0, s.tags[i/2].repeated[i%2])
		}
	}
	for i := 1; i < len(marks); i++ {
		if marks[i].pos < marks[i-1].pos {
			return scorers.ScoreWhy(0, s.order)
		}
	}
	for i := 0; i+1 < len(s.tags); i++ {
		end := marks[2*i+1].pos + len(s.tags[i].close)
		if strings.TrimSpace(text[end:marks[2*i+2].pos]) != "" {
			return scorers.ScoreWhy(0, s.tags[i].between)
		}
	}
	last := len(s.tags) - 1
	if marks[2*last+1].pos+len(s.tags[last].close) != len(text) {
		return scorers.ScoreWhy(0, s.tags[last].after)
	}
	return scorers.Score(1)
}

func (s *Scorer) partial(text string) scorers.Result {
	var buf [2 * maxStackTags]mark
	marks := s.marks(&buf)
	s.scan(text, marks)
	once, reason := 0, ""
	for i, m := range marks {
		switch {
		case m.count == 1:
			once++
		case reason != "":
		case m.count == 0:
			reason = s.tags[i/2].missing[i%2]
		default:
			reason = s.tags[i/2].repeated[i%2]
		}
	}
	return scorers.ScoreWhy(float64(once)/float64(len(marks)), reason)
}

func (s *Scorer) scoreJSON(text string) scorers.Result {
	doc := text
	if body, found, closed := lastJSONBlock(text); found {
		if !closed {
			return scorers.ScoreWhy(0, "```json block not closed")
		}
		doc = body
	}
	if !json.Valid([]byte(doc)) {
		if len(s.keys) == 0 {
			return scorers.ScoreWhy(0, "not valid JSON")
		}
		var v any
		return scorers.ScoreWhy(0, "not valid JSON: "+json.Unmarshal([]byte(doc), &v).Error())
	}
	if len(s.keys) == 0 {
		return scorers.Score(1)
	}
	missing, isObject := missingKey(doc, s.keys)
	switch {
	case !isObject:
		return scorers.ScoreWhy(0, "JSON is not an object")
	case missing >= 0:
		return scorers.ScoreWhy(0, s.missingKey[missing])
	}
	return scorers.Score(1)
}

var _ scorers.Scorer = (*Scorer)(nil)
