package similarity

import (
	"context"
	"math/bits"
	"unicode/utf8"

	"github.com/rewardd/rewardd/scorers"
)

// lcs returns the length of a longest common subsequence of x and y, or
// ctx's error once it is done.
//
// It is the bit-parallel algorithm of Allison and Dix (1986) in the form of
// Hyyrö (2004), as rapidfuzz uses for its Indel distance: a bit vector V over
// the shorter sequence a (bit i: a[i] is not yet matched), and for each
// element c of the longer sequence b, with M the positions of c in a,
//
//	U = V & M;  V = (V + U) | (V − U)
//
// after which the LCS is the number of zero bits of V. The cost is
// O(len(b) · len(a)/64) word operations after trimming the common prefix and
// suffix, and in practice less: the update of V for c only touches the words
// between c's first and last occurrence in a and the carries out of them.
// The memory is O(len(a)): a symbol that occurs at least once per 64-bit
// word of V on average has its mask M stored, one that occurs less is kept as
// a list of positions and M is built for it in a scratch vector as needed.
func lcs(ctx context.Context, x, y []int32) (int, error) {
	common := 0
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		x, y = x[1:], y[1:]
		common++
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		x, y = x[:len(x)-1], y[:len(y)-1]
		common++
	}
	a, b := x, y
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return common, nil
	}
	words := (len(a) + 63) / 64
	t := newSymbols(a, words)

	v := make([]uint64, words)
	for k := range v {
		v[k] = ^uint64(0)
	}
	scratch := make([]uint64, words)
	work := 0 // words updated since the last yield
	for _, c := range b {
		// Every 2^16 words updated (tens of microseconds), let waiting
		// requests in, and stop when ctx ends.
		if work += words; work >= 1<<16 {
			work = 0
			if err := scorers.Yield(ctx); err != nil {
				return 0, err
			}
		}
		sym, ok := t.lookup(c)
		if !ok {
			continue // U = 0 leaves V as it is
		}
		m := scratch
		if sym.mask >= 0 {
			m = t.masks[int(sym.mask)*words : (int(sym.mask)+1)*words]
		} else {
			for _, p := range t.pos[sym.first : sym.first+sym.count] {
				m[p>>6] |= 1 << (p & 63)
			}
		}
		var carry uint64
		lo, hi := int(sym.lo), int(sym.hi)+1
		vs, ms := v[lo:hi], m[lo:hi:hi]
		ms = ms[:len(vs)]
		for k, w := range vs {
			u := w & ms[k]
			var sum uint64
			sum, carry = bits.Add64(w, u, carry)
			vs[k] = sum | (w - u) // u ⊆ w: no borrow
		}
		for k := hi; carry != 0 && k < words; k++ {
			var sum uint64
			sum, carry = bits.Add64(v[k], 0, carry)
			v[k] |= sum
		}
		if sym.mask < 0 {
			for _, p := range t.pos[sym.first : sym.first+sym.count] {
				m[p>>6] = 0
			}
		}
	}
	unmatched := 0
	for k, w := range v {
		if k == words-1 && len(a)%64 != 0 {
			w &= 1<<(len(a)%64) - 1
		}
		unmatched += bits.OnesCount64(w)
	}
	return common + len(a) - unmatched, nil
}

// symbol is what lcs knows of one distinct element of the shorter sequence.
type symbol struct {
	mask         int32 // index of its mask in symbols.masks, or −1
	first, count int32 // its positions: symbols.pos[first : first+count]
	lo, hi       int32 // the words of V holding its first and last position
}

// symbols indexes the elements of a sequence: small values through a slice,
// others through a map.
type symbols struct {
	small []int32 // value → index in syms + 1, for values < len(small)
	large map[int32]int32
	syms  []symbol
	pos   []int32
	masks []uint64
}

func newSymbols(a []int32, words int) *symbols {
	t := &symbols{small: make([]int32, smallLimit(a))}
	counts := make([]int32, 0, 64)
	index := make([]int32, len(a)) // index in syms of each a[i]
	for i, c := range a {
		id, ok := t.id(c)
		if !ok {
			id = int32(len(counts))
			counts = append(counts, 0)
			if int(c) >= 0 && int(c) < len(t.small) {
				t.small[c] = id + 1
			} else {
				if t.large == nil {
					t.large = make(map[int32]int32)
				}
				t.large[c] = id
			}
		}
		counts[id]++
		index[i] = id
	}
	t.syms = make([]symbol, len(counts))
	dense := int32(0)
	next := int32(0)
	for id, n := range counts {
		s := &t.syms[id]
		s.first, s.count, s.mask = next, 0, -1
		next += n
		if int(n) >= words { // at least one per word on average
			s.mask = dense
			dense++
		}
	}
	t.pos = make([]int32, len(a))
	t.masks = make([]uint64, int(dense)*words)
	for i, id := range index {
		s := &t.syms[id]
		if s.count == 0 {
			s.lo = int32(i >> 6)
		}
		s.hi = int32(i >> 6)
		t.pos[s.first+s.count] = int32(i)
		s.count++
		if s.mask >= 0 {
			t.masks[int(s.mask)*words+i>>6] |= 1 << (i & 63)
		}
	}
	return t
}

// smallLimit is the size of the slice index: every value up to the largest
// when that is small next to the sequence (token ids, ASCII), else ASCII.
func smallLimit(a []int32) int {
	hi := int32(-1)
	for _, c := range a {
		hi = max(hi, c)
	}
	if int(hi) < 4*len(a)+128 {
		return int(hi) + 1
	}
	return utf8.RuneSelf
}

func (t *symbols) id(c int32) (int32, bool) {
	if c >= 0 && int(c) < len(t.small) {
		id := t.small[c] - 1
		return id, id >= 0
	}
	id, ok := t.large[c]
	return id, ok
}

func (t *symbols) lookup(c int32) (*symbol, bool) {
	id, ok := t.id(c)
	if !ok {
		return nil, false
	}
	return &t.syms[id], true
}

// runes appends the code points of s to dst. An invalid UTF-8 byte b becomes
// U+DC00+b, as Python's surrogateescape decodes it, so that two different
// invalid bytes stay different.
func runes(dst []int32, s string) []int32 {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = append(dst, int32(c))
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			r = 0xDC00 + rune(c)
		}
		dst = append(dst, r)
		i += size
	}
	return dst
}
