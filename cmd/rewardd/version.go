package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version describes the binary from its build info: module version, VCS
// revision and Go version.
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
	if rev != "" {
		return fmt.Sprintf("rewardd %s (%s, %s)", v, rev, runtime.Version())
	}
	return fmt.Sprintf("rewardd %s (%s)", v, runtime.Version())
}
