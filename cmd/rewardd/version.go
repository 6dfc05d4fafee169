package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// version describes the binary from its build info: module version, VCS
// revision, Go version, and the regex engine it was built with.
func version() string {
	v, rev := "(devel)", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					rev += "-dirty"
				}
			}
		}
	}
	engine := "regex engine " + rematch.Engine()
	if rev != "" {
		return fmt.Sprintf("rewardd %s (%s, %s, %s)", v, rev, runtime.Version(), engine)
	}
	return fmt.Sprintf("rewardd %s (%s, %s)", v, runtime.Version(), engine)
}
