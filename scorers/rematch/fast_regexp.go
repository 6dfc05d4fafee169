//go:build !re2_cgo && rematch_regexp

package rematch

const fastName = "regexp"

// compileFast returns nil: this build has no RE2 (see the package comment).
func compileFast(string) fastEngine { return nil }
