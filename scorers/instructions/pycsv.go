package instructions

import (
	"errors"
	"strings"
)

// errCSV is what Python's csv module raises on text its reader refuses: a
// carriage return followed by more text on an unquoted line.
var errCSV = errors.New("csv: Python's reader raises csv.Error")

// pyCSV is list(csv.reader(io.StringIO(text), delimiter=delim)) as CPython
// 3.11's _csv.c reads it with the excel dialect (quotechar '"',
// doublequote, not strict, no escape character, no skipinitialspace): the
// text is read line by line (split after each "\n", as StringIO does), a
// blank line is an empty record, a quote closes a quoted field only where
// a doubled quote does not follow, and text after a closing quote is
// kept. It returns errCSV where the reader raises. (The reader's limit of
// 131,072 characters a field is not reproduced.)
func pyCSV(text string, delim rune) ([][]string, error) {
	const (
		startRecord = iota
		startField
		inField
		inQuoted
		quoteInQuoted
		eatCRNL
	)
	const eol = -1
	var (
		rows   [][]string
		fields []string
		field  strings.Builder
		state  = startRecord
		bad    bool
	)
	save := func() {
		fields = append(fields, field.String())
		field.Reset()
	}
	process := func(c rune) {
		switch state {
		case startRecord:
			if c == eol {
				return // a blank line: an empty record
			}
			if c == '\n' || c == '\r' {
				state = eatCRNL
				return
			}
			state = startField
			fallthrough
		case startField:
			switch {
			case c == '\n' || c == '\r' || c == eol:
				save()
				state = eatCRNL
				if c == eol {
					state = startRecord
				}
			case c == '"':
				state = inQuoted
			case c == delim:
				save()
			default:
				field.WriteRune(c)
				state = inField
			}
		case inField:
			switch {
			case c == '\n' || c == '\r' || c == eol:
				save()
				state = eatCRNL
				if c == eol {
					state = startRecord
				}
			case c == delim:
				save()
				state = startField
			default:
				field.WriteRune(c)
			}
		case inQuoted:
			switch {
			case c == eol:
			case c == '"':
				state = quoteInQuoted
			default:
				field.WriteRune(c)
			}
		case quoteInQuoted:
			switch {
			case c == '"':
				field.WriteRune(c)
				state = inQuoted
			case c == delim:
				save()
				state = startField
			case c == '\n' || c == '\r' || c == eol:
				save()
				state = eatCRNL
				if c == eol {
					state = startRecord
				}
			default:
				field.WriteRune(c)
				state = inField
			}
		case eatCRNL:
			switch {
			case c == '\n' || c == '\r':
			case c == eol:
				state = startRecord
			default:
				bad = true
			}
		}
	}
	for text != "" {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i+1], text[i+1:]
		} else {
			text = ""
		}
		for _, c := range line {
			process(c)
		}
		process(eol)
		if bad {
			return nil, errCSV
		}
		if state == startRecord {
			rows = append(rows, fields)
			fields = nil
		}
	}
	// The end of the text inside a record: the reader keeps what it has.
	if field.Len() > 0 || state == inQuoted {
		save()
	}
	if fields != nil {
		rows = append(rows, fields)
	}
	return rows, nil
}
