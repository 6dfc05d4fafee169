// Package repetition implements the repetition scorer kind: the n-gram
// repetition penalty of "Demystifying Long Chain-of-Thought Reasoning in
// LLMs" (Yeo et al. 2025, Appendix C.2), as open-r1's
// get_repetition_penalty_reward computes it:
//
//	penalty = (1 − unique n-grams / total n-grams) · MaxPenalty
//
// so 0 for a completion without a repeated n-gram, falling towards
// MaxPenalty as the completion repeats itself. A completion shorter than n
// units scores 0. Range [MaxPenalty, 0].
//
// With unit words (the default), the text is lower-cased and split on white
// space, exactly as open-r1 does (text.lower().split(): Unicode white space
// plus U+001C–U+001F, as Python splits), and the n-grams are runs of n words.
// With unit chars, the n-grams are runs of n characters (code points) of the
// lower-cased text with each run of white space read as one space and the
// ends trimmed, so that indentation is not counted as repetition. chars
// serves text without spaces between words (Chinese, Japanese), for which
// open-r1 segments words with jieba; rewardd has no segmenter, and character
// n-grams need none.
//
// Lower-casing is Go's Unicode simple case mapping; Python's str.lower
// differs on a few characters (İ becomes "i̇" there, "i" here).
package repetition

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/rewardd/rewardd/scorers"
	"github.com/rewardd/rewardd/scorers/extract"
)

// Params configures a repetition function.
type Params struct {
	// NgramSize is n, in [1, 32]. Default 3 (open-r1's repetition_n_grams).
	NgramSize *int `yaml:"ngram_size,omitempty"`
	// MaxPenalty is the score of a completion that is one n-gram repeated:
	// at most 0. Default −1 (open-r1's repetition_max_penalty).
	MaxPenalty *float64 `yaml:"max_penalty,omitempty"`
	// Unit is words (default) or chars.
	Unit string `yaml:"unit,omitempty"`
}

// Units.
const (
	Words = "words"
	Chars = "chars"
)

// maxNgram bounds NgramSize, so that a window of n-gram starts fits in a
// fixed array and hashing one n-gram stays cheap.
const maxNgram = 32

// Scorer scores rollouts for one repetition function. It is safe for
// concurrent use.
type Scorer struct {
	p       Params // with its defaults
	n       int
	penalty float64
	chars   bool
	short   string // reason for a completion shorter than n units
	// seed hashes n-grams; the score does not depend on it.
	seed maphash.Seed
	// scratch holds *scratch values.
	scratch sync.Pool
}

// New builds a scorer from p, filling in defaults. Bad parameters are
// reported as a scorers.ParamErrors naming each key.
func New(p Params) (*Scorer, error) {
	var bad scorers.ParamErrors
	p.NgramSize = scorers.Optional(&bad, "ngram_size", p.NgramSize, 3, 1, maxNgram)
	if f := p.MaxPenalty; f != nil && (!(*f <= 0) || math.IsInf(*f, 0)) {
		bad.Addf("max_penalty", "%v is not a finite number ≤ 0", *f)
	}
	if p.MaxPenalty == nil {
		p.MaxPenalty = new(-1.0)
	}
	p.Unit, _ = scorers.Choice(&bad, "unit", p.Unit, Words, Words, Chars)
	if err := bad.Err(); err != nil {
		return nil, err
	}
	s := &Scorer{p: p, n: *p.NgramSize, penalty: *p.MaxPenalty, chars: p.Unit == Chars, seed: maphash.MakeSeed()}
	s.scratch.New = func() any { return new(scratch) }
	s.short = fmt.Sprintf("shorter than %d %s", s.n, p.Unit)
	return s, nil
}

// Params returns the parameters s runs with, defaults filled in.
func (s *Scorer) Params() Params { return s.p }

// Range returns the closed interval every OK value lies in: [MaxPenalty, 0].
func (s *Scorer) Range() (lo, hi float64) { return s.penalty, 0 }

// Score returns the repetition penalty of the completion. It makes one pass
// over the completion and one hash-set insertion per n-gram (a few
// microseconds for a GSM8K-sized answer), and checks ctx every 16,384
// n-grams, returning an Error once it is done.
func (s *Scorer) Score(ctx context.Context, r *scorers.Rollout) scorers.Result {
	sc := s.scratch.Get().(*scratch)
	defer s.release(sc)
	text := s.units(r.Completion, sc)
	// sc.starts holds the offset in text of each unit, then len(text).
	starts := sc.starts
	units := len(starts) - 1
	if units < s.n {
		return scorers.ScoreWhy(0, s.short)
	}
	total := units - s.n + 1
	// ngram returns n-gram i (less the space after its n-th word).
	ngram := func(i int) string {
		end := starts[i+s.n]
		if !s.chars {
			end--
		}
		return text[starts[i]:end]
	}
	set := sc.set(total)
	distinct := 0
	for i := range total {
		if i&(1<<14-1) == 1<<14-1 {
			if err := ctx.Err(); err != nil {
				return scorers.Errorf("cancelled: %v", err)
			}
		}
		g := ngram(i)
		h := maphash.String(s.seed, g)
		// A slot holds the top 32 bits of an n-gram's hash and 1 + its
		// index; equal hashes are told apart by comparing the n-grams.
		tag := h >> 32 << 32
		for k := h & uint64(len(set)-1); ; k = (k + 1) & uint64(len(set)-1) {
			e := set[k]
			if e == 0 {
				set[k] = tag | uint64(i+1)
				distinct++
				break
			}
			if e&^(1<<32-1) == tag && ngram(int(uint32(e))-1) == g {
				break
			}
		}
	}
	return scorers.Score((1-float64(distinct)/float64(total))*s.penalty + 0) // + 0: no −0
}

// scratch is the memory one Score call works in, kept between calls.
type scratch struct {
	starts []int
	buf    []byte // the canonical text
	slots  []uint64
}

// set returns an empty open-addressing table for n entries: a power of two
// at least 4n/3, so that probes stay short (linear probing at a load of at
// most 3/4) and the table small enough to stay in cache.
func (sc *scratch) set(n int) []uint64 {
	size := 16
	for size < n+n/3 {
		size *= 2
	}
	if cap(sc.slots) < size {
		sc.slots = make([]uint64, size)
	}
	sc.slots = sc.slots[:size]
	clear(sc.slots)
	return sc.slots
}

// release returns sc to the pool unless it grew too large to keep.
func (s *Scorer) release(sc *scratch) {
	if cap(sc.starts) > maxPooled+1 || cap(sc.slots) > 4*maxPooled || cap(sc.buf) > 8*maxPooled {
		return
	}
	sc.starts = sc.starts[:0]
	s.scratch.Put(sc)
}

// maxPooled bounds the scratch memory kept between calls: a completion of
// more units gets memory of its own, dropped after the call. 1<<16 units
// (300 KiB of English) keep 512 KiB of offsets and 2 MiB of table.
const maxPooled = 1 << 16

// units returns the canonical text (lower-cased; words joined by one space
// and ending with one, or for chars white space runs read as one space and
// the ends trimmed) and sets sc.starts to the offset of each unit in it
// followed by len(canonical), so that the n-gram starting at unit i is
// canonical[starts[i]:starts[i+n]], less the trailing space for words.
// Bytes that are not valid UTF-8 are kept as they are in ASCII words, and
// read as U+FFFD in others (strings.ToLower). The text is sc's memory: it
// is valid until sc is used again.
func (s *Scorer) units(text string, sc *scratch) string {
	starts := sc.starts[:0]
	if cap(sc.buf) < len(text)+1 {
		sc.buf = make([]byte, 0, len(text)+1)
	}
	buf := sc.buf[:0]
	for i := skipSpace(text, 0); i < len(text); i = skipSpace(text, i) {
		j, ascii := skipWord(text, i)
		word := text[i:j]
		if s.chars && len(starts) > 0 {
			starts = append(starts, len(buf))
			buf = append(buf, ' ')
		}
		if !s.chars {
			starts = append(starts, len(buf))
		}
		at := len(buf)
		if ascii {
			buf = append(buf, word...)
			for k, c := range buf[at:] {
				buf[at+k] = c | asciiUpper[c]
			}
		} else {
			// Lower-casing maps rune to rune and never makes or removes
			// white space, so it may be done word by word.
			buf = append(buf, strings.ToLower(word)...)
		}
		if s.chars {
			for k := at; k < len(buf); {
				starts = append(starts, k)
				if buf[k] < utf8.RuneSelf {
					k++
				} else {
					_, size := utf8.DecodeRune(buf[k:])
					k += size
				}
			}
		} else {
			buf = append(buf, ' ')
		}
		i = j
	}
	sc.starts = append(starts, len(buf))
	sc.buf = buf
	if len(buf) == 0 {
		return ""
	}
	return unsafe.String(&buf[0], len(buf))
}

// asciiUpper is 0x20 for the ASCII capitals: c | asciiUpper[c] lower-cases c.
var asciiUpper = [256]byte{
	'A': 0x20, 'B': 0x20, 'C': 0x20, 'D': 0x20, 'E': 0x20, 'F': 0x20, 'G': 0x20, 'H': 0x20, 'I': 0x20,
	'J': 0x20, 'K': 0x20, 'L': 0x20, 'M': 0x20, 'N': 0x20, 'O': 0x20, 'P': 0x20, 'Q': 0x20, 'R': 0x20,
	'S': 0x20, 'T': 0x20, 'U': 0x20, 'V': 0x20, 'W': 0x20, 'X': 0x20, 'Y': 0x20, 'Z': 0x20,
}

// skipSpace returns the offset of the first non-space at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if extract.PySpace(c) == 0 {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			return i
		}
		i += size
	}
	return i
}

// skipWord returns the offset of the first space at or after i, and
// whether the bytes before it are all ASCII.
func skipWord(s string, i int) (int, bool) {
	ascii := true
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if extract.PySpace(c) != 0 {
				return i, ascii
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			return i, ascii
		}
		i += size
	}
	return i, ascii
}
