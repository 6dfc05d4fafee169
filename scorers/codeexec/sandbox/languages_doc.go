package sandbox

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// LanguageTable is the languages table of docs/sandbox.md, in Markdown,
// made from Languages and SandboxFusionOnly: a test holds the document to
// it.
func LanguageTable() string {
	var b strings.Builder
	b.WriteString("| language | SandboxFusion | Debian package | compile | run | memory bounded by | limits that differ | make deps |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	cpp, _ := LookupLanguage("cpp")
	defaultCompile := cpp.CompileLimits
	for _, l := range Languages() {
		compile := "—"
		if l.Compiled() {
			compile = "`" + commandLine(l.Compile, l.Source) + "`"
		}
		run := "in the fork server's child"
		if !l.InProcess {
			run = "`" + commandLine(l.Run, l.Source) + "`"
		}
		deps := "`CODE_EXEC_LANGUAGES=" + l.Name + "`"
		if l.Default {
			deps = "default"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", strings.Join(l.Names(), ", "), l.SandboxFusion, strings.Join(append([]string{l.Package}, l.Libraries...), ", "),
			compile, run, l.Memory, differences(l, defaultCompile), deps)
	}
	b.WriteString("\nSandboxFusion's languages that rewardd does not run (`/run_code` answers them as SandboxFusion answers a language it does not know):\n\n")
	b.WriteString("| SandboxFusion | why |\n|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(SandboxFusionOnly)) {
		fmt.Fprintf(&b, "| %s | %s |\n", SandboxFusionName(name), SandboxFusionOnly[name])
	}
	return b.String()
}

// SandboxFusionName is SandboxFusion's spelling of a name that
// SandboxFusionOnly holds in lower case.
func SandboxFusionName(name string) string {
	switch name {
	case "r":
		return "R"
	case "d_ut":
		return "D_ut"
	}
	return name
}

// commandLine shows argv as a shell would take it, the program by its
// base name, a script argument (TypeScript's) as <script>.
func commandLine(argv []string, source string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case i == 0 && strings.HasPrefix(a, "/"):
			a = path.Base(a)
		case strings.Contains(a, "\n"):
			a = "<script: " + source + " → main.js>"
		case strings.ContainsAny(a, " *?"):
			a = "'" + a + "'"
		}
		words[i] = strings.ReplaceAll(a, "{source}", source)
	}
	return strings.Join(words, " ")
}

// differences says where a language's limits differ from the defaults
// (DefaultLimits for a run, C++'s for a compile).
func differences(l *Language, defaultCompile Limits) string {
	var d []string
	if s := limitsDiff(l.RunLimits, DefaultLimits()); s != "" {
		d = append(d, "run: "+s)
	}
	if l.Compiled() {
		if s := limitsDiff(l.CompileLimits, defaultCompile); s != "" {
			d = append(d, "compile: "+s)
		}
		if l.ProgramKB > 0 {
			d = append(d, fmt.Sprintf("program files up to %d MiB", l.ProgramKB>>10))
		}
	} else if l.ProgramKB > 0 {
		d = append(d, fmt.Sprintf("files the run writes up to %d MiB", l.ProgramKB>>10))
	}
	if len(d) == 0 {
		return "—"
	}
	return strings.Join(d, "; ")
}

func limitsDiff(l, def Limits) string {
	var d []string
	if l.CPUSeconds != def.CPUSeconds {
		d = append(d, fmt.Sprintf("%g s CPU", l.CPUSeconds))
	}
	if l.WallSeconds != def.WallSeconds {
		d = append(d, fmt.Sprintf("%g s wall", l.WallSeconds))
	}
	if l.MemoryMB != def.MemoryMB {
		d = append(d, fmt.Sprintf("%d MB", l.MemoryMB))
	}
	if l.Processes != def.Processes {
		d = append(d, fmt.Sprintf("%d processes", l.Processes))
	}
	return strings.Join(d, ", ")
}

// String names a memory bound in the docs.
func (m MemoryBound) String() string {
	switch m {
	case AddressSpace:
		return "address space"
	case Cgroup:
		return "cgroup and the runtime's flag"
	case Resident:
		return "cgroup and peak resident set"
	}
	return fmt.Sprintf("MemoryBound(%d)", int(m))
}
