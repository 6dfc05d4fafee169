package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rewardd/rewardd/scorers/builtin"
	"github.com/rewardd/rewardd/server/config"
)

// FuzzLoad feeds any bytes to the config loader: it never panics, and it
// either loads a config or returns config.Errors that each name the file.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yml")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("functions: [{name: a, kind: regex, pattern: '((((((((((a'}]"))
	f.Add([]byte("functions: &a [*a]"))
	reg := builtin.Registry()
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Load("f.yml", data, reg)
		if err == nil {
			if len(cfg.Functions) == 0 || cfg.Fingerprint == "" {
				t.Fatalf("loaded a config with %d functions and fingerprint %q", len(cfg.Functions), cfg.Fingerprint)
			}
			return
		}
		var errs config.Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error %v is not config.Errors", err)
		}
		for _, e := range errs {
			if e.File != "f.yml" {
				t.Fatalf("error names file %q", e.File)
			}
		}
	})
}
