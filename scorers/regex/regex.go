// Package regex implements the regex scorer kind: a pattern (RE2 syntax,
// linear time) tested against the completion.
//
// The modes follow Python's re: match anchors at the start of the text,
// fullmatch at both ends, search finds a match anywhere (each scores 1 or 0),
// and count scores min(1, count/count_target) where count is the number of
// non-overlapping matches. Anchoring uses \A and \z, so the m flag changes
// only what ^ and $ inside the pattern mean.
//
// Each pattern is analysed once for literal text every match must contain,
// start or end with; strings.Contains, HasPrefix and Index then reject most
// non-matching texts, and narrow the others, before the engine runs. Where
// the pattern is plain text the engine does not run at all. The engine is
// package rematch's: RE2's DFAs in a binary built with the re2_cgo tag, Go's
// regexp (several times slower than CPython's re on long completions)
// otherwise, with the same matches either way.
//
// Differences from Python's re, beyond RE2 syntax: without the m flag $
// matches only at the very end (Python's $ also matches before a final
// newline; write \n?$ for that), and count ignores an empty match right after
// a previous match (Python's findall counts it).
package regex

import (
	"context"
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/rematch"
)

// Params configures a regex function.
type Params struct {
	// Pattern is the regular expression, in RE2 syntax.
	Pattern string `yaml:"pattern,omitempty"`
	// PatternField names the row field that holds the pattern, for datasets
	// with a pattern per row. Exactly one of Pattern and PatternField is set.
	PatternField string `yaml:"pattern_field,omitempty"`
	// Mode is match, fullmatch, search (the default) or count.
	Mode string `yaml:"mode,omitempty"`
	// CountTarget is n in count mode's score min(1, count/n), in
	// [1, 1048576]; default 1. It may be set in count mode only.
	CountTarget *int `yaml:"count_target,omitempty"`
	// Flags holds any of the letters i (case-insensitive), m (^ and $ match
	// at line breaks) and s (. matches a newline).
	Flags string `yaml:"flags,omitempty"`
}

// Modes.
const (
	Match     = "match"
	FullMatch = "fullmatch"
	Search    = "search"
	Count     = "count"
)

// rowCacheSize bounds the compiled row patterns a scorer keeps.
const rowCacheSize = 1024

// Scorer scores completions against a pattern. It is safe for concurrent use.
type Scorer struct {
	p     Params // with its defaults
	mode  string
	n     int
	flags syntax.Flags
	// fixed is the compiled Pattern; nil when patterns come from a row field.
	fixed *matcher
	field string
	rows  *cache
	// noPattern is the reason given for a row without a pattern.
	noPattern string
}

// maxCountTarget bounds count_target.
const maxCountTarget = 1 << 20

// New returns a scorer for p. Errors are a scorers.ParamErrors naming each
// key at fault; a pattern that does not compile is reported under "pattern"
// with the pattern quoted.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	if mode, ok := scorers.Choice(&bad, "mode", p.Mode, Search, Match, FullMatch, Search, Count); ok {
		p.Mode = mode
	} else {
		p.Mode = Search // to check the other parameters
	}
	switch {
	case p.Mode == Count:
		p.CountTarget = scorers.Optional(&bad, "count_target", p.CountTarget, 1, 1, maxCountTarget)
	case p.CountTarget != nil:
		bad.Addf("count_target", "is only used in count mode, not %s", p.Mode)
	}
	s := &Scorer{mode: p.Mode, n: 1, field: p.PatternField}
	if p.CountTarget != nil {
		s.n = *p.CountTarget
	}
	s.flags = syntax.Perl
	var flags []byte // p.Flags in a fixed order
	for _, f := range "ims" {
		if strings.ContainsRune(p.Flags, f) {
			flags = append(flags, byte(f))
		}
	}
	for _, f := range p.Flags {
		switch f {
		case 'i':
			s.flags |= syntax.FoldCase
		case 'm':
			s.flags &^= syntax.OneLine
		case 's':
			s.flags |= syntax.DotNL
		default:
			bad.Addf("flags", "unknown flag %q (any of i, m, s)", f)
		}
	}
	p.Flags = string(flags)
	s.p = p
	switch {
	case p.Pattern == "" && p.PatternField == "":
		bad.Add("pattern", errors.New("is missing (set pattern or pattern_field)"))
	case p.Pattern != "" && p.PatternField != "":
		bad.Add("pattern_field", errors.New("is set together with pattern (set only one)"))
	case p.PatternField != "":
		// A row's pattern is request data: Go's engine, whose memory
		// follows the pattern's size (see rematch.CompileStd).
		s.rows = newCache(rowCacheSize, func(pat string) (*matcher, error) { return s.compile(pat, rematch.CompileStd) })
		s.noPattern = "no pattern in field " + s.field
	default:
		m, err := s.compile(p.Pattern, rematch.Compile)
		bad.Add("pattern", err)
		s.fixed = m
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in and the
// flags in the order ims.
func (s *Scorer) Params() Params { return s.p }

// Score tests the completion against the pattern. A row without the pattern
// field (or with an empty one) is NotApplicable; a row pattern that does not
// compile is an Error. Score does not use ctx: its work is bounded by the
// completion's length (RE2 matching is linear in it).
func (s *Scorer) Score(_ context.Context, r *scorers.Rollout) scorers.Result {
	m := s.fixed
	if m == nil {
		pat, found, err := scorers.String(r, s.field)
		switch {
		case err != nil:
			return scorers.Errorf("%v", err)
		case !found:
			return scorers.Skip(r.WhyMissing(s.noPattern, s.field))
		case pat == "":
			return scorers.Skip(s.noPattern)
		}
		if m, err = s.rows.get(pat); err != nil {
			return scorers.Errorf("field %s: %v", s.field, err)
		}
	}
	return m.score(r.Completion)
}

// matcher is one compiled pattern in the scorer's mode.
type matcher struct {
	n int
	// find answers whether there is a match (all modes but count with n > 1).
	find *check
	// all counts matches (count mode with n > 1).
	all *check
}

func (m *matcher) score(text string) scorers.Result {
	if m.all != nil {
		c := m.all.count(text, m.n)
		if c == 0 {
			return scorers.ScoreWhy(0, "no match")
		}
		return scorers.Score(float64(c) / float64(m.n))
	}
	if m.find.exists(text) {
		return scorers.Score(1)
	}
	return scorers.ScoreWhy(0, "no match")
}

// compile parses pat with the scorer's flags and builds its matcher with
// engine. Errors quote the pattern.
func (s *Scorer) compile(pat string, engine func(*syntax.Regexp) (*rematch.Regexp, error)) (*matcher, error) {
	tree, err := syntax.Parse(pat, s.flags)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", short(pat), err)
	}
	m := &matcher{n: s.n}
	switch s.mode {
	case Match:
		tree = anchor(tree, true, false)
	case FullMatch:
		tree = anchor(tree, true, true)
	}
	if s.mode == Count && s.n > 1 {
		m.all, err = newCheck(tree, false, engine)
	} else {
		m.find, err = newCheck(tree, true, engine)
	}
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", short(pat), err)
	}
	return m, nil
}

// anchor wraps tree in \A and/or \z.
func anchor(tree *syntax.Regexp, begin, end bool) *syntax.Regexp {
	sub := []*syntax.Regexp{tree}
	if begin {
		sub = append([]*syntax.Regexp{{Op: syntax.OpBeginText}}, sub...)
	}
	if end {
		sub = append(sub, &syntax.Regexp{Op: syntax.OpEndText})
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: sub}
}

// cache holds compiled row patterns, failures included. It is bounded: when
// the current generation is full it becomes the old one and the previous old
// one is dropped; a hit in the old generation moves the entry back. Patterns
// in use thus survive, at a cost of at most 2×size entries.
type cache struct {
	size  int
	build func(string) (*matcher, error)

	mu       sync.RWMutex
	cur, old map[string]entry
}

type entry struct {
	m   *matcher
	err error
}

func newCache(size int, build func(string) (*matcher, error)) *cache {
	return &cache{size: size, build: build, cur: make(map[string]entry)}
}

// get returns the matcher for pat, compiling it on first use. Two goroutines
// missing at once may both compile; one result is kept.
func (c *cache) get(pat string) (*matcher, error) {
	c.mu.RLock()
	e, ok := c.cur[pat]
	c.mu.RUnlock()
	if ok {
		return e.m, e.err
	}
	c.mu.Lock()
	e, ok = c.old[pat]
	if ok {
		c.put(pat, e)
	}
	c.mu.Unlock()
	if ok {
		return e.m, e.err
	}
	// The pattern came from a request and may share its memory with the
	// whole request (see server.decodeScoreRequest): keep a copy of its own.
	pat = strings.Clone(pat)
	e.m, e.err = c.build(pat)
	c.mu.Lock()
	c.put(pat, e)
	c.mu.Unlock()
	return e.m, e.err
}

// put stores e; c.mu must be held for writing.
func (c *cache) put(pat string, e entry) {
	if len(c.cur) >= c.size {
		c.old, c.cur = c.cur, make(map[string]entry, c.size)
	}
	c.cur[pat] = e
}

var _ scorers.Scorer = (*Scorer)(nil)

// short cuts a long pattern for error messages.
func short(pat string) string {
	const max = 200
	if len(pat) > max {
		return pat[:max] + "…"
	}
	return pat
}
