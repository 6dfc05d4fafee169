package format

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// lastJSONBlock finds the last ```json fence in text: an opening ``` whose
// info string is json (any case, surrounding blanks allowed). found reports
// whether there is one; closed whether a ``` follows, and then body is the
// text between the fence's line and that closing ```.
func lastJSONBlock(text string) (body string, found, closed bool) {
	for end := len(text); ; {
		i := strings.LastIndex(text[:end], "```")
		if i < 0 {
			return "", false, false
		}
		line, rest, _ := strings.Cut(text[i+3:], "\n")
		if strings.EqualFold(strings.TrimSpace(line), "json") {
			body, _, closed = strings.Cut(rest, "```")
			if !closed {
				body = ""
			}
			return body, true, closed
		}
		end = i
	}
}

// missingKey walks the top level of doc, which must be valid JSON, and returns
// the index of the first of keys it does not hold (-1 when it holds them all),
// and whether doc is an object at all. Keys compare as encoding/json decodes
// them into a map; only keys with escapes or invalid UTF-8 are decoded (and
// allocate).
func missingKey(doc string, keys []string) (missing int, isObject bool) {
	var buf [16]bool
	found := buf[:0]
	if len(keys) <= len(buf) {
		found = buf[:len(keys)]
	} else {
		found = make([]bool, len(keys))
	}
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return -1, false
	}
	for i = skipSpace(doc, i+1); i < len(doc) && doc[i] == '"'; i = skipSpace(doc, i) {
		end := skipString(doc, i)
		key := doc[i+1 : end-1]
		if strings.IndexByte(key, '\\') >= 0 || !utf8.ValidString(key) {
			var decoded string
			if json.Unmarshal([]byte(doc[i:end]), &decoded) != nil {
				return -1, false // not valid JSON after all
			}
			key = decoded
		}
		for k, want := range keys {
			found[k] = found[k] || key == want
		}
		i = skipSpace(doc, end) + 1 // the colon
		i = skipSpace(doc, skipValue(doc, skipSpace(doc, i)))
		if i < len(doc) && doc[i] == ',' {
			i = skipSpace(doc, i+1)
		}
	}
	for k, ok := range found {
		if !ok {
			return k, true
		}
	}
	return -1, true
}

func skipSpace(doc string, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the JSON string that starts at
// doc[i] == '"'.
func skipString(doc string, i int) int {
	for i++; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(doc)
}

// skipValue returns the index just past the JSON value that starts at doc[i].
func skipValue(doc string, i int) int {
	depth := 0
	for i < len(doc) {
		switch doc[i] {
		case '"':
			i = skipString(doc, i)
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of the enclosing object
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}
