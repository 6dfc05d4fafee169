package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/rewardd/rewardd/scorers/rematch"
)

// buildInfo describes the binary: `rewardd version`, `rewardd --version`,
// the "serving" log line and the rewardd_build_info metric say the same.
type buildInfo struct {
	Version     string // module version, "(devel)" for a build from a checkout
	Commit      string // VCS revision, "-dirty" when the tree had changes; "" when unknown
	GoVersion   string
	RegexEngine string // "re2" (cgo), "re2_wasm" (RE2 as Go, no cgo) or "regexp" (rematch.Engine)
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

// logRegexEngine says at startup which engine runs the config's patterns
// (those the scanner does not take: see package rematch): at warn level
// when it is Go's regexp, tens of times slower than RE2 on long
// completions, so that such a build is never fast or slow silently.
func (b buildInfo) logRegexEngine(log *zap.Logger) {
	engine := zap.String("regex_engine", b.RegexEngine)
	switch b.RegexEngine {
	case "re2":
		log.Info("regex engine: RE2 through cgo", engine)
	case "re2_wasm":
		log.Info("regex engine: RE2 translated to Go (built without cgo); a build with -tags re2_cgo and libre2 (make build) matches user patterns up to 1.5x faster", engine)
	default:
		log.Warn("regex engine: Go's regexp, NOT RE2 (built with -tags rematch_regexp): patterns the scanner does not take match 10-50x slower on long completions; build without that tag", engine)
	}
}
