package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// buildInfo describes the binary: `rewardd version`, `rewardd --version`,
// the "serving" log line and the rewardd_build_info metric say the same.
type buildInfo struct {
	Version     string // module version, "(devel)" for a build from a checkout
	Commit      string // VCS revision, "-dirty" when the tree had changes; "" when unknown
	GoVersion   string
	RegexEngine string // "re2" (cgo) or "regexp"
}

// readBuildInfo reads the binary's build info.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", GoVersion: runtime.Version(), RegexEngine: rematch.Engine()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Commit != "" {
		b.Commit += "-dirty"
	}
	return b
}

// String is the line `rewardd version` prints.
func (b buildInfo) String() string {
	engine := "regex engine " + b.RegexEngine
	if b.Commit != "" {
		return fmt.Sprintf("rewardd %s (%s, %s, %s)", b.Version, b.Commit, b.GoVersion, engine)
	}
	return fmt.Sprintf("rewardd %s (%s, %s)", b.Version, b.GoVersion, engine)
}

// register adds rewardd_build_info to reg: a gauge of 1 whose labels are
// the build's version, commit, Go version and regex engine, so that a
// dashboard can tell which build each server runs.
func (b buildInfo) register(reg prometheus.Registerer) error {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rewardd_build_info",
		Help: "1, labelled with the build's version, VCS commit, Go version and regex engine.",
	}, []string{"version", "commit", "go_version", "regex_engine"})
	commit := b.Commit
	if commit == "" {
		commit = "unknown" // built without VCS stamping (-buildvcs=false, or outside a checkout)
	}
	g.WithLabelValues(b.Version, commit, b.GoVersion, b.RegexEngine).Set(1)
	return reg.Register(g)
}
