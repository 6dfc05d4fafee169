//go:build !re2_cgo && !rematch_regexp

package rematch

import re2 "github.com/wasilibs/go-re2"

const fastName = "re2_wasm"

// compileFast compiles expr (RE2 syntax, as re2Syntax writes it) with RE2
// as go-re2 ships it without cgo: RE2 compiled to WebAssembly and the
// WebAssembly translated to Go (wasm2go), or returns nil when RE2 does not
// take it.
func compileFast(expr string) fastEngine {
	re, err := re2.Compile(expr)
	if err != nil {
		return nil
	}
	return re
}
