// Package langdetect tells the language of a text as Python's langdetect
// (Mimino666/langdetect 1.0.9, a port of Shuyo Nakatani's
// language-detection) does with DetectorFactory.seed = 0: the same 55
// language profiles, the same text normalisation, and the same random
// draws (Python's Mersenne Twister seeded with 0, its choice and gauss), so
// that it gives the language IFEval's reference evaluator gives, and the
// same one every time.
//
// langdetect samples n-grams of the text at random and multiplies the
// languages' probabilities by each one's, in 7 trials; unseeded, its
// answer on a short or mixed text changes from run to run. Seeded, each
// call reseeds, so its answer is a function of the text: this package
// computes that function. Floating-point sums are done in the order
// langdetect does them (its profiles in the order Debian's copy loads
// them); the one place the results could part is a last-bit difference
// between Go's math.Log, Sin and Cos and C's, in the smoothing constant of
// a trial, which would change a verdict only at a probability within an
// ulp of langdetect's thresholds.
package langdetect

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// profiles is embedded uncompressed: gunzipping its 2 MB took a third of
// New's time (bench/README.md, "Instruction following").
//
//go:embed profiles.txt
var profiles []byte

// Detector holds the language profiles. It is safe for concurrent use.
type Detector struct {
	langs []string
	// grams maps an n-gram (its runes packed by gramKey) to the profiles
	// that have it, by index, with its probability there; unigrams of the
	// Basic Multilingual Plane are in unigrams instead, indexed by rune.
	grams    map[uint64][]entry
	unigrams [][]entry
	// cjk maps an ideograph to the first of its class.
	cjk map[rune]rune
}

type entry struct {
	lang int
	p    float64
}

// New loads the profiles (about 25 ms and 25 MB).
func New() (*Detector, error) {
	text := profiles
	d := &Detector{grams: make(map[uint64][]entry, 90000), unigrams: make([][]entry, 0x10000), cjk: map[rune]rune{}}
	var nwords [][3]float64
	all := make([]entry, 0, 190000) // every n-gram's entries, in one array
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		key, rest, ok := bytes.Cut(line, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("profiles: line %q", line)
		}
		switch string(key) {
		case "langs":
			d.langs = strings.Fields(string(rest))
			continue
		case "nwords":
			for _, f := range strings.Fields(string(rest)) {
				var n [3]float64
				for i, s := range strings.SplitN(f, ",", 3) {
					v, err := strconv.ParseInt(s, 10, 64)
					if err != nil {
						return nil, fmt.Errorf("profiles: n_words %q: %w", f, err)
					}
					n[i] = float64(v)
				}
				nwords = append(nwords, n)
			}
			continue
		case "cjk":
			class := []rune(string(rest))
			for _, r := range class {
				d.cjk[r] = class[0]
			}
			continue
		}
		var rs [3]rune
		n := 0
		for _, r := range string(key) {
			if n == 3 {
				return nil, fmt.Errorf("profiles: n-gram %q", key)
			}
			rs[n] = r
			n++
		}
		first := len(all)
		for len(rest) > 0 {
			var lang, freq int64
			var ok1, ok2 bool
			lang, rest, ok1 = number(rest, ':')
			freq, rest, ok2 = number(rest, ' ')
			if !ok1 || !ok2 || lang >= int64(len(nwords)) || n == 0 {
				return nil, fmt.Errorf("profiles: n-gram %q: bad entry", key)
			}
			// As langdetect: 1.0 * freq / n_words[len(word) - 1].
			all = append(all, entry{int(lang), float64(freq) / nwords[lang][n-1]})
		}
		es := all[first:len(all):len(all)]
		if n == 1 && rs[0] < 0x10000 {
			d.unigrams[rs[0]] = es
		} else {
			d.grams[gramKey(rs[:n])] = es
		}
	}
	if len(d.langs) == 0 || len(d.langs) != len(nwords) {
		return nil, fmt.Errorf("profiles: %d languages, %d n_words", len(d.langs), len(nwords))
	}
	return d, nil
}

// number reads a decimal number from the start of b, up to sep or the
// end, and returns the rest after sep.
func number(b []byte, sep byte) (int64, []byte, bool) {
	var v int64
	i := 0
	for ; i < len(b) && b[i] != sep; i++ {
		c := b[i]
		if c < '0' || c > '9' || i > 15 {
			return 0, nil, false
		}
		v = v*10 + int64(c-'0')
	}
	if i == 0 {
		return 0, nil, false
	}
	if i < len(b) {
		i++
	}
	return v, b[i:], true
}

// Languages returns the codes Detect can return, as langdetect writes
// them ("en", "zh-cn").
func (d *Detector) Languages() []string { return append([]string(nil), d.langs...) }

// langdetect's constants.
const (
	alphaDefault   = 0.5
	alphaWidth     = 0.05
	iterationLimit = 1000
	probThreshold  = 0.1
	convThreshold  = 0.99999
	baseFreq       = 10000
	nTrial         = 7
	maxTextLength  = 10000
)

// Unknown is what Detect returns when no language is likely enough, as
// langdetect's detect does.
const Unknown = "unknown"

var (
	// langdetect's URL pattern has {1,2076}, over RE2's limit of 1000.
	urlRE  = regexp.MustCompile(`https?://[-_.?&~;+=/#0-9A-Za-z]{1,1000}[-_.?&~;+=/#0-9A-Za-z]{0,1000}[-_.?&~;+=/#0-9A-Za-z]{0,76}`)
	mailRE = regexp.MustCompile(`[-_.0-9A-Za-z]{1,64}@[-_0-9A-Za-z]{1,255}[-_.0-9A-Za-z]{1,255}`)
	viRE   = regexp.MustCompile("([" + toNormalizeVi + "])([" + dmarkClass + "])")
)

// gramKey packs the 1 to 3 runes of an n-gram, 21 bits each. No n-gram
// holds U+0000 (normalize makes it a space), so n-grams of different
// lengths have different keys.
func gramKey(rs []rune) uint64 {
	var k uint64
	for _, r := range rs {
		k = k<<21 | uint64(r)
	}
	return k
}

// Detect returns the language of text as langdetect.detect does with seed
// 0, and ok false where langdetect raises LangDetectException ("No
// features in text": nothing in the text it can read).
func (d *Detector) Detect(text string) (lang string, ok bool) {
	ngrams := d.ngrams(d.clean(text))
	if len(ngrams) == 0 {
		return "", false
	}
	langprob := make([]float64, len(d.langs))
	rnd := newPyRandom(0)
	prob := make([]float64, len(d.langs))
	for range nTrial {
		for i := range prob {
			prob[i] = 1.0 / float64(len(d.langs))
		}
		alpha := alphaDefault + rnd.gauss()*alphaWidth
		weight := alpha / baseFreq
		for i := 0; ; i++ {
			update(prob, ngrams[rnd.randbelow(len(ngrams))], weight)
			if i%5 == 0 && (normalize(prob) > convThreshold || i >= iterationLimit) {
				break
			}
		}
		for j := range langprob {
			langprob[j] += prob[j] / nTrial
		}
	}
	best, bestP := Unknown, 0.0
	for i, p := range langprob {
		// Python's sort(reverse=True) of the languages above the
		// threshold keeps the first of equal ones first.
		if p > probThreshold && p > bestP {
			best, bestP = d.langs[i], p
		}
	}
	return best, true
}

// update multiplies each probability by weight + the n-gram's
// probability in that language (es), as _update_lang_prob.
func update(prob []float64, es []entry, weight float64) {
	k := 0
	for i := range prob {
		p := 0.0
		if k < len(es) && es[k].lang == i {
			p = es[k].p
			k++
		}
		prob[i] *= weight + p
	}
}

// normalize divides the probabilities by their sum (added left to right,
// as Python 3.11's sum of floats) and returns the largest.
func normalize(prob []float64) float64 {
	sum := 0.0
	for _, p := range prob {
		sum += p
	}
	maxp := 0.0
	for i, p := range prob {
		p /= sum
		if maxp < p {
			maxp = p
		}
		prob[i] = p
	}
	return maxp
}

// clean is Detector.append then cleaning_text: URLs and e-mail addresses
// become spaces, Vietnamese letters with combining marks are composed,
// runs of spaces are collapsed, the text is cut at 10,000 characters, and
// Latin letters are dropped from a text mostly in another script.
func (d *Detector) clean(text string) []rune {
	if strings.Contains(text, "http") {
		text = urlRE.ReplaceAllLiteralString(text, " ")
	}
	if strings.IndexByte(text, '@') >= 0 {
		text = mailRE.ReplaceAllLiteralString(text, " ")
	}
	if strings.ContainsAny(text, dmarkClass) {
		text = viRE.ReplaceAllStringFunc(text, normalizeVi)
	}
	in := []rune(text)
	if len(in) > maxTextLength {
		in = in[:maxTextLength]
	}
	out := make([]rune, 0, len(in))
	var pre rune
	for _, ch := range in {
		if ch != ' ' || pre != ' ' {
			out = append(out, ch)
		}
		pre = ch
	}
	latin, nonLatin := 0, 0
	for _, ch := range out {
		switch {
		case ch >= 'A' && ch <= 'z':
			latin++
		case ch >= 0x300:
			// langdetect means to leave out Latin Extended Additional
			// here, but compares a block number with a block name.
			nonLatin++
		}
	}
	if latin*2 < nonLatin {
		kept := out[:0]
		for _, ch := range out {
			if ch < 'A' || ch > 'z' {
				kept = append(kept, ch)
			}
		}
		out = kept
	}
	return out
}

// ngrams lists the profiles' entries of the text's 1-, 2- and 3-grams
// that some profile has, in order, as _extract_ngrams (words in capitals
// give none after their first letter).
func (d *Detector) ngrams(text []rune) [][]entry {
	out := make([][]entry, 0, 2*len(text))
	grams := []rune{' '}
	capital := false
	for _, ch := range text {
		ch = d.normalize(ch)
		last := grams[len(grams)-1]
		if last == ' ' {
			grams = append(grams[:0], ' ')
			capital = false
			if ch == ' ' {
				continue
			}
		} else if len(grams) >= 3 {
			grams = append(grams[:0], grams[1:]...)
		}
		grams = append(grams, ch)
		if pyIsUpper(ch) {
			if pyIsUpper(last) {
				capital = true
			}
		} else {
			capital = false
		}
		if capital {
			continue
		}
		for n := 1; n <= 3 && n <= len(grams); n++ {
			w := grams[len(grams)-n:]
			var es []entry
			switch {
			case n == 1 && w[0] == ' ':
				continue
			case n == 1 && w[0] < 0x10000:
				es = d.unigrams[w[0]]
			default:
				es = d.grams[gramKey(w)]
			}
			if es != nil {
				out = append(out, es)
			}
		}
	}
	return out
}

// pyIsUpper is Python's str.isupper of one character.
func pyIsUpper(r rune) bool { return unicode.IsUpper(r) }

// normalize is NGram.normalize.
func (d *Detector) normalize(ch rune) rune {
	switch {
	case ch <= 0x7f:
		if ch < 'A' || ch > 'Z' && ch < 'a' || ch > 'z' {
			return ' '
		}
	case ch <= 0xff:
		if strings.ContainsRune(latin1Excluded, ch) {
			return ' '
		}
	case ch >= 0x180 && ch <= 0x24f:
		switch ch {
		case 0x219:
			return 0x15f
		case 0x21b:
			return 0x163
		}
	case ch >= 0x2000 && ch <= 0x206f:
		return ' '
	case ch >= 0x600 && ch <= 0x6ff:
		if ch == 0x6cc {
			return 0x64a
		}
	case ch >= 0x1e00 && ch <= 0x1eff:
		if ch >= 0x1ea0 {
			return 0x1ec3
		}
	case ch >= 0x3040 && ch <= 0x309f:
		return 0x3042
	case ch >= 0x30a0 && ch <= 0x30ff:
		return 0x30a2
	case ch >= 0x3100 && ch <= 0x312f, ch >= 0x31a0 && ch <= 0x31bf:
		return 0x3105
	case ch >= 0x4e00 && ch <= 0x9fff:
		if c, ok := d.cjk[ch]; ok {
			return c
		}
	case ch >= 0xac00 && ch <= 0xd7af:
		return 0xac00
	}
	return ch
}

// langdetect's messages.properties.
const (
	latin1Excluded = "\u00A0\u00AB\u00B0\u00BB"
	toNormalizeVi  = "AEIOUYaeiouy\u00c2\u00ca\u00d4\u00e2\u00ea\u00f4\u0102\u0103\u01a0\u01a1\u01af\u01b0"
	dmarkClass     = "\u0300\u0301\u0303\u0309\u0323"
)

var normalizedVi = [5]string{
	"\u00C0\u00C8\u00CC\u00D2\u00D9\u1EF2\u00E0\u00E8\u00EC\u00F2\u00F9\u1EF3\u1EA6\u1EC0\u1ED2\u1EA7\u1EC1\u1ED3\u1EB0\u1EB1\u1EDC\u1EDD\u1EEA\u1EEB",
	"\u00C1\u00C9\u00CD\u00D3\u00DA\u00DD\u00E1\u00E9\u00ED\u00F3\u00FA\u00FD\u1EA4\u1EBE\u1ED0\u1EA5\u1EBF\u1ED1\u1EAE\u1EAF\u1EDA\u1EDB\u1EE8\u1EE9",
	"\u00C3\u1EBC\u0128\u00D5\u0168\u1EF8\u00E3\u1EBD\u0129\u00F5\u0169\u1EF9\u1EAA\u1EC4\u1ED6\u1EAB\u1EC5\u1ED7\u1EB4\u1EB5\u1EE0\u1EE1\u1EEE\u1EEF",
	"\u1EA2\u1EBA\u1EC8\u1ECE\u1EE6\u1EF6\u1EA3\u1EBB\u1EC9\u1ECF\u1EE7\u1EF7\u1EA8\u1EC2\u1ED4\u1EA9\u1EC3\u1ED5\u1EB2\u1EB3\u1EDE\u1EDF\u1EEC\u1EED",
	"\u1EA0\u1EB8\u1ECA\u1ECC\u1EE4\u1EF4\u1EA1\u1EB9\u1ECB\u1ECD\u1EE5\u1EF5\u1EAC\u1EC6\u1ED8\u1EAD\u1EC7\u1ED9\u1EB6\u1EB7\u1EE2\u1EE3\u1EF0\u1EF1",
}

// normalizeVi composes a letter and a combining mark, as NGram.normalize_vi.
func normalizeVi(m string) string {
	rs := []rune(m)
	a := indexRune(toNormalizeVi, rs[0])
	k := indexRune(dmarkClass, rs[1])
	return string([]rune(normalizedVi[k])[a])
}

func indexRune(s string, r rune) int {
	for i, c := range []rune(s) {
		if c == r {
			return i
		}
	}
	return -1
}
