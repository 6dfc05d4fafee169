package config

import (
	"bytes"
	_ "embed"
)

//go:embed default.yaml
var defaultYAML []byte

// DefaultName names the embedded default config in errors and reports.
const DefaultName = "default.yaml (embedded)"

// Default returns the default config, what `rewardd serve` serves without
// --config: the functions of a GSM8K-style GRPO run.
func Default() []byte { return bytes.Clone(defaultYAML) }
