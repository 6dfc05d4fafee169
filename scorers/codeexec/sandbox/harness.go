package sandbox

import _ "embed"

// The Python servers of a slot (harness.py says what each does and how
// they talk): the part both roles share, then each role's own.
var (
	//go:embed harness.py
	harnessShared string
	//go:embed runner.py
	harnessRunner string
	//go:embed zygote_io.py
	harnessZygoteIO string
	//go:embed zygote.py
	harnessZygote string
)

// harnessProgram is the program python runs (with -c) as the slot's server
// in role, "runner" or "zygote"; any other role gets the shared part
// alone, which does nothing.
func harnessProgram(role string) string {
	switch role {
	case "runner":
		return harnessShared + "\n\n" + harnessRunner
	case "zygote":
		return harnessShared + "\n\n" + harnessZygoteIO + "\n\n" + harnessZygote
	}
	return harnessShared
}
