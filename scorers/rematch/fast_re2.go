//go:build re2_cgo

package rematch

import re2 "github.com/wasilibs/go-re2"

const fastName = "re2"

// compileFast compiles expr (RE2 syntax, as re2Syntax writes it) with RE2,
// or returns nil when RE2 does not take it.
func compileFast(expr string) fastEngine {
	re, err := re2.Compile(expr)
	if err != nil {
		return nil
	}
	return re
}
