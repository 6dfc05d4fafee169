package sandbox_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rewardd/rewardd/internal/sandboxtest"
	"github.com/rewardd/rewardd/scorers/codeexec/sandbox"
)

// languagePrograms are one language's programs for its table test and its
// hostile suite. In the hostile ones OUTSIDE stands for a host path the
// program must not create, PORT for a loopback port it must not reach; a
// program prints "OPEN ..." for an attempt that got through and
// "blocked ..." for one that did not.
type languagePrograms struct {
	// echo copies stdin to stdout.
	echo string
	// compileError does not compile (a syntax error, for a language
	// that is not compiled: it then ends as a runtime error).
	compileError string
	// runtimeError exits with a non-zero status (an exception).
	runtimeError string
	// loop runs forever.
	loop string
	// forkBomb starts processes without end; memoryBomb allocates
	// (and touches) memory without end; flood prints without end.
	forkBomb, memoryBomb, flood string
	// network connects to PORT and writeOutside writes to OUTSIDE, each
	// printing one attempt line.
	network, writeOutside string
}

// moreLanguagePrograms are the programs of every language beyond the first
// four (languages_more.go).
var moreLanguagePrograms = map[string]languagePrograms{
	"go": {
		echo:         "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { io.Copy(os.Stdout, os.Stdin) }\n",
		compileError: "package main\n\nfunc main() { x := 1 }\n",
		runtimeError: "package main\n\nimport \"os\"\n\nfunc main() { var a []int; a[len(os.Args)+2] = 1 }\n",
		loop:         "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n",
		forkBomb:     "package main\n\nimport \"os/exec\"\n\nfunc main() {\n\tfor {\n\t\texec.Command(\"./main\").Start()\n\t}\n}\n",
		memoryBomb:   "package main\n\nfunc main() {\n\tvar s [][]byte\n\tfor {\n\t\tb := make([]byte, 1<<20)\n\t\tfor i := range b {\n\t\t\tb[i] = 1\n\t\t}\n\t\ts = append(s, b)\n\t}\n}\n",
		flood:        "package main\n\nimport \"os\"\n\nfunc main() {\n\tb := []byte(\"yyyyyyyyyyyyyyy\\n\")\n\tfor {\n\t\tos.Stdout.Write(b)\n\t}\n}\n",
		network:      "package main\n\nimport (\n\t\"fmt\"\n\t\"net\"\n)\n\nfunc main() {\n\tif _, err := net.Dial(\"tcp\", \"127.0.0.1:PORT\"); err != nil {\n\t\tfmt.Println(\"blocked connect\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN connect\")\n\t}\n}\n",
		writeOutside: "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif err := os.WriteFile(OUTSIDE, []byte(\"x\"), 0o644); err != nil {\n\t\tfmt.Println(\"blocked write\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN write\")\n\t}\n}\n",
	},
	"rust": {
		echo:         "use std::io::*;\nfn main() {\n    let mut s = String::new();\n    stdin().read_to_string(&mut s).unwrap();\n    print!(\"{}\", s);\n}\n",
		compileError: "fn main() {\n    let x: i32 = \"a\";\n}\n",
		runtimeError: "fn main() {\n    let v: Vec<usize> = std::env::args().map(|a| a.len()).collect();\n    println!(\"{}\", v[v.len() + 2]);\n}\n",
		loop:         "fn main() {\n    loop {}\n}\n",
		forkBomb:     "fn main() {\n    loop {\n        let _ = std::process::Command::new(\"./main\").spawn();\n    }\n}\n",
		memoryBomb:   "fn main() {\n    let mut v: Vec<Vec<u8>> = Vec::new();\n    loop {\n        v.push(vec![1u8; 1 << 20]);\n    }\n}\n",
		flood:        "use std::io::Write;\nfn main() {\n    let mut o = std::io::stdout();\n    loop {\n        if o.write_all(b\"yyyyyyyyyyyyyyy\\n\").is_err() { return; }\n    }\n}\n",
		network:      "fn main() {\n    match std::net::TcpStream::connect(\"127.0.0.1:PORT\") {\n        Ok(_) => println!(\"OPEN connect\"),\n        Err(e) => println!(\"blocked connect {}\", e),\n    }\n}\n",
		writeOutside: "fn main() {\n    match std::fs::write(OUTSIDE, \"x\") {\n        Ok(_) => println!(\"OPEN write\"),\n        Err(e) => println!(\"blocked write {}\", e),\n    }\n}\n",
	},
	"bash": {
		echo:         "cat\n",
		compileError: "if then fi\n",
		runtimeError: "echo to stderr >&2\nexit 3\n",
		loop:         "while :; do :; done\n",
		forkBomb:     ":(){ :|:& };:\nwhile :; do :; done\n",
		memoryBomb:   "x=yyyyyyyy\nwhile :; do x=$x$x; done\n",
		flood:        "while :; do echo yyyyyyyyyyyyyyy; done\n",
		network:      "if exec 3<>/dev/tcp/127.0.0.1/PORT; then echo OPEN connect; else echo blocked connect; fi\n",
		writeOutside: "if echo x > OUTSIDE; then echo OPEN write; else echo blocked write; fi\n",
	},
	"typescript": {
		echo:         "const s: string = require(\"fs\").readFileSync(0, \"utf8\");\nprocess.stdout.write(s);\n",
		compileError: "let x: number = ;\n",
		runtimeError: "function f(n: number): number { throw new Error(\"no \" + n); }\nf(1);\n",
		loop:         "for (;;) {}\n",
		forkBomb:     "const cp = require(\"child_process\");\nfor (;;) { try { cp.spawn(\"/usr/bin/node\", [\"main.js\"]); } catch (e) {} }\n",
		memoryBomb:   "const a: number[][] = [];\nfor (;;) a.push(new Array(1 << 20).fill(1.5));\n",
		flood:        "const fs = require(\"fs\");\nconst b = \"y\".repeat(1 << 16);\nfor (;;) fs.writeSync(1, b);\n",
		network:      "const s = require(\"net\").connect(PORT, \"127.0.0.1\");\ns.on(\"connect\", () => console.log(\"OPEN connect\"));\ns.on(\"error\", (e: any) => console.log(\"blocked connect \" + e.code));\n",
		writeOutside: "try { require(\"fs\").writeFileSync(OUTSIDE, \"x\"); console.log(\"OPEN write\"); } catch (e) { console.log(\"blocked write \" + e.code); }\n",
	},
	"php": {
		echo:         "echo stream_get_contents(STDIN);\n",
		compileError: "<?php\necho 1 +;\n",
		runtimeError: "<?php\nthrow new Exception(\"no\");\n",
		loop:         "<?php\nwhile (true) {}\n",
		forkBomb:     "<?php\nwhile (true) { @popen(\"/usr/bin/php8.2 main.php\", \"r\"); }\n",
		memoryBomb:   "<?php\n$a = [];\nwhile (true) { $a[] = str_repeat(\"x\", 1 << 20); }\n",
		flood:        "<?php\n$b = str_repeat(\"y\", 65536);\nwhile (true) { echo $b; }\n",
		network:      "<?php\n$s = @stream_socket_client(\"tcp://127.0.0.1:PORT\", $errno, $errstr, 1);\necho $s ? \"OPEN connect\\n\" : \"blocked connect $errstr\\n\";\n",
		writeOutside: "<?php\necho @file_put_contents(OUTSIDE, \"x\") === false ? \"blocked write\\n\" : \"OPEN write\\n\";\n",
	},
	"ruby": {
		echo:         "print STDIN.read\n",
		compileError: "def f(\n",
		runtimeError: "raise \"no\"\n",
		loop:         "loop {}\n",
		forkBomb:     "loop { fork rescue nil }\n",
		memoryBomb:   "a = []\nloop { a << \"x\" * (1 << 20) }\n",
		flood:        "b = \"y\" * 65536\nloop { $stdout.write(b) }\n",
		network:      "require \"socket\"\nbegin\n  TCPSocket.new(\"127.0.0.1\", PORT)\n  puts \"OPEN connect\"\nrescue SystemCallError => e\n  puts \"blocked connect #{e.class}\"\nend\n",
		writeOutside: "begin\n  File.write(OUTSIDE, \"x\")\n  puts \"OPEN write\"\nrescue SystemCallError => e\n  puts \"blocked write #{e.class}\"\nend\n",
	},
	"perl": {
		echo:         "print while <STDIN>;\n",
		compileError: "my $x = ;\n",
		runtimeError: "die \"no\\n\";\n",
		loop:         "1 while 1;\n",
		forkBomb:     "fork while 1;\n",
		memoryBomb:   "my @a;\npush @a, \"x\" x (1 << 20) while 1;\n",
		flood:        "$| = 1;\nprint \"y\" x 65536 while 1;\n",
		network:      "use IO::Socket::INET;\nmy $s = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:PORT\");\nprint $s ? \"OPEN connect\\n\" : \"blocked connect $!\\n\";\n",
		writeOutside: "print open(my $f, \">\", OUTSIDE) ? \"OPEN write\\n\" : \"blocked write $!\\n\";\n",
	},
	"lua": {
		echo:         "io.write(io.read(\"a\"))\n",
		compileError: "local x =\n",
		runtimeError: "error(\"no\")\n",
		loop:         "while true do end\n",
		forkBomb:     "while true do os.execute(\"lua5.4 main.lua &\") end\n",
		memoryBomb:   "local t = {}\nwhile true do t[#t + 1] = string.rep(\"x\", 1 << 20) .. #t end\n",
		flood:        "local b = string.rep(\"y\", 65536)\nwhile true do io.write(b) end\n",
		network:      "local p = io.popen(\"bash -c 'exec 3<>/dev/tcp/127.0.0.1/PORT && echo OPEN connect || echo blocked connect'\")\nio.write(p:read(\"a\"))\n",
		writeOutside: "local f, err = io.open(OUTSIDE, \"w\")\nprint(f and \"OPEN write\" or \"blocked write \" .. err)\n",
	},
}

// moreLanguagesPool starts a one-slot pool that runs lang, or skips the
// test naming the Debian package to install.
func moreLanguagesPool(t *testing.T, lang string) *sandbox.Pool {
	t.Helper()
	sandboxtest.SkipUnlessRoot(t)
	sandboxtest.SkipUnlessAvailable(t, lang)
	return startPool(t, sandbox.Config{Slots: 1, Languages: []string{lang}})
}

// TestMoreLanguages: in every language beyond the first four whose
// toolchain is installed (the pool's start has run its probe), a program
// that echoes its stdin passes, one that does not compile fails to (or,
// not compiled, is a runtime error), one that raises is a runtime error,
// one that loops runs out of time.
func TestMoreLanguages(t *testing.T) {
	for _, l := range sandbox.Languages() {
		progs, ok := moreLanguagePrograms[l.Name]
		if l.Default {
			continue
		}
		t.Run(l.Name, func(t *testing.T) {
			if !ok {
				t.Fatalf("%s has no programs in moreLanguagePrograms: every language of the table needs its table test and hostile suite", l.Name)
			}
			p := moreLanguagesPool(t, l.Name)
			in := "21\nhello, wörld\n"
			job := langJob(t, p, l.Name, progs.echo, in, "")
			job.KeepOutput = true
			for k, tr := range run(t, p, job).Tests {
				if tr.Status != sandbox.Ran || string(tr.Stdout) != job.Inputs[k] {
					t.Errorf("echo of %q: %s (%s) %q, want it to run and print its input", job.Inputs[k], tr.Status, tr.Detail, tr.Stdout)
				}
			}

			if l.Compiled() {
				b, err := p.Compile(t.Context(), sandbox.CompileJob{Language: l.Name, Source: progs.compileError, Limits: l.CompileLimits})
				if err != nil || b.Status != sandbox.Failed || b.Output == "" {
					t.Errorf("compile error: %+v, %v; want Failed with the compiler's messages", b, err)
				}
			} else {
				tr := run(t, p, langJob(t, p, l.Name, progs.compileError, "")).Tests[0]
				oneOfStatus(t, tr, sandbox.RuntimeError)
			}

			tr := run(t, p, langJob(t, p, l.Name, progs.runtimeError, "")).Tests[0]
			oneOfStatus(t, tr, sandbox.RuntimeError)

			job = langJob(t, p, l.Name, progs.loop, "")
			job.Limits.CPUSeconds, job.Limits.WallSeconds = 1, 4
			tr = run(t, p, job).Tests[0]
			oneOfStatus(t, tr, sandbox.Timeout)
		})
	}
}

// TestHostileMoreLanguages: in every language beyond the first four whose
// toolchain is installed, a fork bomb, a memory bomb, a connection to the
// host, a write outside the work dir and a flood of output each end as
// the program's failure, leave nothing behind and the slot scoring right.
func TestHostileMoreLanguages(t *testing.T) {
	lim := sandbox.Limits{CPUSeconds: 2, WallSeconds: 6, MemoryMB: 256, OutputKB: 64, Processes: 32}
	for _, l := range sandbox.Languages() {
		progs, ok := moreLanguagePrograms[l.Name]
		if l.Default || !ok {
			continue // TestMoreLanguages fails a language without programs
		}
		t.Run(l.Name, func(t *testing.T) {
			h := &hostileLang{hostileSlot: newHostileSlot(t, moreLanguagesPool(t, l.Name)), lang: l.Name}
			after := func(t *testing.T) {
				t.Helper()
				h.hostileSlot.after(t)
				job := langJob(t, h.p, l.Name, progs.echo, "42\n")
				job.Check = func(_ int, out []byte) bool { return strings.TrimSpace(string(out)) == "42" }
				if tr := run(t, h.p, job).Tests[0]; tr.Status != sandbox.Passed {
					t.Errorf("the slot no longer runs %s right: %s (%s)", l.Name, tr.Status, tr.Detail)
				}
			}
			t.Run("fork bomb", func(t *testing.T) {
				tr := h.run(t, progs.forkBomb, lim)
				oneOfStatus(t, tr, sandbox.Timeout, sandbox.RuntimeError, sandbox.Memory, sandbox.Crashed)
				after(t)
			})
			t.Run("memory bomb", func(t *testing.T) {
				tr := h.run(t, progs.memoryBomb, lim)
				oneOfStatus(t, tr, sandbox.Memory)
				after(t)
			})
			t.Run("network", func(t *testing.T) {
				port, check := listener(t)
				tr := h.run(t, sub(progs.network, "PORT", port), lim)
				out := string(tr.Stdout)
				noneOf(t, out, "OPEN")
				wantBlocked(t, out, 1)
				check()
				after(t)
			})
			t.Run("write outside the work dir", func(t *testing.T) {
				outside := hostPath(t, "/var/tmp", l.Name)
				tr := h.run(t, sub(progs.writeOutside, "OUTSIDE", strconv.Quote(outside)), lim)
				out := string(tr.Stdout)
				noneOf(t, out, "OPEN")
				wantBlocked(t, out, 1)
				assertAbsent(t, outside)
				after(t)
			})
			t.Run("infinite output", func(t *testing.T) {
				tr := h.run(t, progs.flood, lim)
				oneOfStatus(t, tr, sandbox.Output)
				after(t)
			})
		})
	}
}
