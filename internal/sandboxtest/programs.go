package sandboxtest

import "maps"

// Programs are one language's programs for its table tests (the
// sandbox's, /run_code's and code_exec's) and its hostile suite. In the
// hostile ones OUTSIDE stands for a host path the program must not
// create, PORT for a loopback port it must not reach; a program prints
// "OPEN ..." for an attempt that got through and "blocked ..." for one
// that did not.
type Programs struct {
	// Echo copies stdin to stdout.
	Echo string
	// CompileError does not compile (a syntax error, for a language
	// that is not compiled: it then ends as a runtime error).
	CompileError string
	// RuntimeError exits with a non-zero status (an exception).
	RuntimeError string
	// Loop runs forever.
	Loop string
	// ForkBomb starts processes without end; MemoryBomb allocates
	// (and touches) memory without end;
	// Flood prints without end.
	ForkBomb, MemoryBomb, Flood string
	// Network connects to PORT and WriteOutside writes to OUTSIDE, each
	// printing one attempt line.
	Network, WriteOutside string
	// Namespaces makes each of NamespaceAttempts, printing a line for
	// each.
	Namespaces string
	// Unreachable says, for a language whose Network or Namespaces is
	// empty, why: what was checked to find no way there.
	Unreachable string
}

// MoreLanguagePrograms are the programs of every language beyond the first
// four (the sandbox's languages_more.go and languages_extra.go), by name.
func MoreLanguagePrograms() map[string]Programs {
	programs := map[string]Programs{
		"go": {
			Echo:         "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n)\n\nfunc main() { io.Copy(os.Stdout, os.Stdin) }\n",
			CompileError: "package main\n\nfunc main() { x := 1 }\n",
			RuntimeError: "package main\n\nimport \"os\"\n\nfunc main() { var a []int; a[len(os.Args)+2] = 1 }\n",
			Loop:         "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n",
			ForkBomb:     "package main\n\nimport \"os/exec\"\n\nfunc main() {\n\tfor {\n\t\texec.Command(\"./main\").Start()\n\t}\n}\n",
			MemoryBomb:   "package main\n\nfunc main() {\n\tvar s [][]byte\n\tfor {\n\t\tb := make([]byte, 1<<20)\n\t\tfor i := range b {\n\t\t\tb[i] = 1\n\t\t}\n\t\ts = append(s, b)\n\t}\n}\n",
			Flood:        "package main\n\nimport \"os\"\n\nfunc main() {\n\tb := []byte(\"yyyyyyyyyyyyyyy\\n\")\n\tfor {\n\t\tos.Stdout.Write(b)\n\t}\n}\n",
			Network:      "package main\n\nimport (\n\t\"fmt\"\n\t\"net\"\n)\n\nfunc main() {\n\tif _, err := net.Dial(\"tcp\", \"127.0.0.1:PORT\"); err != nil {\n\t\tfmt.Println(\"blocked connect\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN connect\")\n\t}\n}\n",
			WriteOutside: "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tif err := os.WriteFile(OUTSIDE, []byte(\"x\"), 0o644); err != nil {\n\t\tfmt.Println(\"blocked write\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN write\")\n\t}\n}\n",
		},
		"rust": {
			Echo:         "use std::io::*;\nfn main() {\n    let mut s = String::new();\n    stdin().read_to_string(&mut s).unwrap();\n    print!(\"{}\", s);\n}\n",
			CompileError: "fn main() {\n    let x: i32 = \"a\";\n}\n",
			RuntimeError: "fn main() {\n    let v: Vec<usize> = std::env::args().map(|a| a.len()).collect();\n    println!(\"{}\", v[v.len() + 2]);\n}\n",
			Loop:         "fn main() {\n    loop {}\n}\n",
			ForkBomb:     "fn main() {\n    loop {\n        let _ = std::process::Command::new(\"./main\").spawn();\n    }\n}\n",
			MemoryBomb:   "fn main() {\n    let mut v: Vec<Vec<u8>> = Vec::new();\n    loop {\n        v.push(vec![1u8; 1 << 20]);\n    }\n}\n",
			Flood:        "use std::io::Write;\nfn main() {\n    let mut o = std::io::stdout();\n    loop {\n        if o.write_all(b\"yyyyyyyyyyyyyyy\\n\").is_err() { return; }\n    }\n}\n",
			Network:      "fn main() {\n    match std::net::TcpStream::connect(\"127.0.0.1:PORT\") {\n        Ok(_) => println!(\"OPEN connect\"),\n        Err(e) => println!(\"blocked connect {}\", e),\n    }\n}\n",
			WriteOutside: "fn main() {\n    match std::fs::write(OUTSIDE, \"x\") {\n        Ok(_) => println!(\"OPEN write\"),\n        Err(e) => println!(\"blocked write {}\", e),\n    }\n}\n",
		},
		"bash": {
			Echo:         "cat\n",
			CompileError: "if then fi\n",
			RuntimeError: "echo to stderr >&2\nexit 3\n",
			Loop:         "while :; do :; done\n",
			ForkBomb:     ":(){ :|:& };:\nwhile :; do :; done\n",
			MemoryBomb:   "x=yyyyyyyy\nwhile :; do x=$x$x; done\n",
			Flood:        "while :; do echo yyyyyyyyyyyyyyy; done\n",
			Network:      "if exec 3<>/dev/tcp/127.0.0.1/PORT; then echo OPEN connect; else echo blocked connect; fi\n",
			WriteOutside: "if echo x > OUTSIDE; then echo OPEN write; else echo blocked write; fi\n",
		},
		"typescript": {
			Echo:         "const s: string = require(\"fs\").readFileSync(0, \"utf8\");\nprocess.stdout.write(s);\n",
			CompileError: "let x: number = ;\n",
			RuntimeError: "function f(n: number): number { throw new Error(\"no \" + n); }\nf(1);\n",
			Loop:         "for (;;) {}\n",
			ForkBomb:     "const cp = require(\"child_process\");\nfor (;;) { try { cp.spawn(\"/usr/bin/node\", [\"main.js\"]); } catch (e) {} }\n",
			MemoryBomb:   "const a: number[][] = [];\nfor (;;) a.push(new Array(1 << 20).fill(1.5));\n",
			Flood:        "const fs = require(\"fs\");\nconst b = \"y\".repeat(1 << 16);\nfor (;;) fs.writeSync(1, b);\n",
			Network:      "const s = require(\"net\").connect(PORT, \"127.0.0.1\");\ns.on(\"connect\", () => console.log(\"OPEN connect\"));\ns.on(\"error\", (e: any) => console.log(\"blocked connect \" + e.code));\n",
			WriteOutside: "try { require(\"fs\").writeFileSync(OUTSIDE, \"x\"); console.log(\"OPEN write\"); } catch (e) { console.log(\"blocked write \" + e.code); }\n",
		},
		"php": {
			Echo:         "echo stream_get_contents(STDIN);\n",
			CompileError: "<?php\necho 1 +;\n",
			RuntimeError: "<?php\nthrow new Exception(\"no\");\n",
			Loop:         "<?php\nwhile (true) {}\n",
			ForkBomb:     "<?php\nwhile (true) { @popen(\"/usr/bin/php8.2 main.php\", \"r\"); }\n",
			MemoryBomb:   "<?php\n$a = [];\nwhile (true) { $a[] = str_repeat(\"x\", 1 << 20); }\n",
			Flood:        "<?php\n$b = str_repeat(\"y\", 65536);\nwhile (true) { echo $b; }\n",
			Network:      "<?php\n$s = @stream_socket_client(\"tcp://127.0.0.1:PORT\", $errno, $errstr, 1);\necho $s ? \"OPEN connect\\n\" : \"blocked connect $errstr\\n\";\n",
			WriteOutside: "<?php\necho @file_put_contents(OUTSIDE, \"x\") === false ? \"blocked write\\n\" : \"OPEN write\\n\";\n",
		},
		"ruby": {
			Echo:         "print STDIN.read\n",
			CompileError: "def f(\n",
			RuntimeError: "raise \"no\"\n",
			Loop:         "loop {}\n",
			ForkBomb:     "loop { fork rescue nil }\n",
			MemoryBomb:   "a = []\nloop { a << \"x\" * (1 << 20) }\n",
			Flood:        "b = \"y\" * 65536\nloop { $stdout.write(b) }\n",
			Network:      "require \"socket\"\nbegin\n  TCPSocket.new(\"127.0.0.1\", PORT)\n  puts \"OPEN connect\"\nrescue SystemCallError => e\n  puts \"blocked connect #{e.class}\"\nend\n",
			WriteOutside: "begin\n  File.write(OUTSIDE, \"x\")\n  puts \"OPEN write\"\nrescue SystemCallError => e\n  puts \"blocked write #{e.class}\"\nend\n",
		},
		"perl": {
			Echo:         "print while <STDIN>;\n",
			CompileError: "my $x = ;\n",
			RuntimeError: "die \"no\\n\";\n",
			Loop:         "1 while 1;\n",
			ForkBomb:     "fork while 1;\n",
			MemoryBomb:   "my @a;\npush @a, \"x\" x (1 << 20) while 1;\n",
			Flood:        "$| = 1;\nprint \"y\" x 65536 while 1;\n",
			Network:      "use IO::Socket::INET;\nmy $s = IO::Socket::INET->new(PeerAddr => \"127.0.0.1:PORT\");\nprint $s ? \"OPEN connect\\n\" : \"blocked connect $!\\n\";\n",
			WriteOutside: "print open(my $f, \">\", OUTSIDE) ? \"OPEN write\\n\" : \"blocked write $!\\n\";\n",
		},
		"lua": {
			Echo:         "io.write(io.read(\"a\"))\n",
			CompileError: "local x =\n",
			RuntimeError: "error(\"no\")\n",
			Loop:         "while true do end\n",
			ForkBomb:     "while true do os.execute(\"lua5.4 main.lua &\") end\n",
			MemoryBomb:   "local t = {}\nwhile true do t[#t + 1] = string.rep(\"x\", 1 << 20) .. #t end\n",
			Flood:        "local b = string.rep(\"y\", 65536)\nwhile true do io.write(b) end\n",
			Network:      "local p = io.popen(\"bash -c 'exec 3<>/dev/tcp/127.0.0.1/PORT && echo OPEN connect || echo blocked connect'\")\nio.write(p:read(\"a\"))\n",
			WriteOutside: "local f, err = io.open(OUTSIDE, \"w\")\nprint(f and \"OPEN write\" or \"blocked write \" .. err)\n",
		},
		"r": {
			Echo:         "con <- file(\"stdin\", \"rb\")\ncat(rawToChar(readBin(con, \"raw\", 1e7)))\n",
			CompileError: "x <- (\n",
			RuntimeError: "stop(\"no\")\n",
			Loop:         "repeat {}\n",
			ForkBomb:     "repeat system(\"Rscript main.R\", wait = FALSE)\n",
			MemoryBomb:   "x <- list()\ni <- 0\nrepeat { i <- i + 1; x[[i]] <- runif(1e6) }\n",
			Flood:        "b <- strrep(\"y\", 65536)\nrepeat cat(b)\n",
			Network:      "r <- tryCatch({ socketConnection(\"127.0.0.1\", PORT, open = \"r+\", timeout = 2); \"OPEN connect\" },\n  error = function(e) paste(\"blocked connect\", conditionMessage(e)), warning = function(w) paste(\"blocked connect\", conditionMessage(w)))\ncat(r, \"\\n\", sep = \"\")\n",
			WriteOutside: "r <- tryCatch({ writeLines(\"x\", OUTSIDE); \"OPEN write\" },\n  error = function(e) paste(\"blocked write\", conditionMessage(e)), warning = function(w) paste(\"blocked write\", conditionMessage(w)))\ncat(r, \"\\n\", sep = \"\")\n",
		},
	}
	maps.Copy(programs, extraLanguagePrograms())
	for name, src := range namespacePrograms() {
		if p, ok := programs[name]; ok {
			p.Namespaces = src
			programs[name] = p
		}
	}
	return programs
}
