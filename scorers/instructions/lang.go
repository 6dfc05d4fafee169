package instructions

import (
	"slices"
	"strings"
)

// The reference tells the language of a response with Python's
// langdetect, which is random unless seeded; the reference's published
// verdicts are those of seed 0. Package langdetect computes what langdetect
// seeded with 0 answers, so rewardd gives the reference's verdicts, the same
// ones every time.

// isLanguage says whether text is in the language lang (a langdetect
// code); a text langdetect cannot read (it raises) counts as followed, as
// in the reference.
func (e *env) isLanguage(text, lang string) bool {
	a := e.langMemo.get(text, func(text string) langAnswer {
		got, ok := e.lang.Detect(text)
		return langAnswer{got, ok}
	})
	return !a.ok || a.lang == lang
}

// langAnswer is what langdetect says about a text.
type langAnswer struct {
	lang string
	ok   bool
}

// checkLanguage says what is wrong with a language code an instruction
// asks for: langdetect answers only its 55 codes, and an instruction
// asking for another could never be followed.
func (e *env) checkLanguage(lang string) error {
	if codes := e.lang.Languages(); !slices.Contains(codes, lang) {
		slices.Sort(codes)
		return errorf("%q is not a language langdetect tells (one of %s)", lang, strings.Join(codes, ", "))
	}
	return nil
}
