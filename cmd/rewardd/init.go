package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rewardd/rewardd/internal/cli"
	"github.com/rewardd/rewardd/server/config"
)

// starterHead opens the file `rewardd init` writes.
const starterHead = `# rewards.yml: the reward functions rewardd serves, written by 'rewardd init'.
# It starts as rewardd's embedded default config (GSM8K-style math GRPO);
# edit it, then:
#
#   rewardd check --config rewards.yml                           # every problem at once
#   rewardd check --config rewards.yml --samples samples.jsonl   # on completions of your data
#   rewardd serve --config rewards.yml
#
# Every kind, key and default: docs/config.md in rewardd's repository.

`

// starterMore closes it: more kinds, commented out. Uncommented (the first
// "#" of each line removed) under functions:, they load (TestInit).
const starterMore = `
# More kinds: move under functions: and remove the first "#" of each line
# (a function's weight is 1 unless weights: says otherwise).
#
#  # 1 when the answer is mathematically equal to the reference (MATH-style \boxed{}).
#  - name: math_accuracy
#    kind: math
#    reference_field: solution
#    reference_extract: [boxed]
#  # How close the completion is to a reference text, in [0, 1].
#  - name: closeness
#    kind: similarity
#    metric: rouge_l
#    reference_field: reference
#  # The completion is JSON with these keys.
#  - name: json_shape
#    kind: format
#    mode: json
#    required_keys: [answer]
#  # IFEval's instructions (row fields instruction_id_list, kwargs): 1 when all are followed.
#  - name: ifeval
#    kind: instruction_following
#    scoring: all
#  # 1 when the letter chosen ("The answer is (C)", \boxed{C}, …) is the row's answer.
#  - name: choice
#    kind: multiple_choice
#    letters: ABCD
#  # 1 when the completion's JSON validates against the schema.
#  - name: schema
#    kind: json_schema
#    schema: {type: object, required: [answer], properties: {answer: {type: integer}}}
#  # 1 when the completion makes the row's expected tool call(s) (BFCL's rules).
#  - name: tools
#    kind: tool_call
#    reference_field: tool_calls
#  # Run the completion's Python against the row's stdin/stdout tests, in a sandbox.
#  - name: tests
#    kind: code_exec
#    test_style: io
#    limits: {cpu_seconds: 1, wall_seconds: 4}
`

// runInit writes the starter config to the named file, or to stdout.
func runInit(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	fs := newFlags("init", stdout)
	force := fs.Bool("force", false, "overwrite the file if it exists")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return cli.Usagef("unexpected argument %q (one file at most)", fs.Arg(1))
	}
	text := starterHead + string(config.Default()) + starterMore
	if fs.NArg() == 0 {
		_, err := io.WriteString(stdout, text)
		return err
	}
	path := fs.Arg(0)
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return cli.Usagef("%s exists: keep it, or overwrite it with --force", path)
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, text); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s; next: rewardd check --config %s\n", path, path)
	return err
}
