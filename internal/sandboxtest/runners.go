package sandboxtest

// RunnerPrograms are one test runner's files of tests (SandboxFusion's
// pytest, go_test, junit) for its table tests (the sandbox's, /run_code's)
// and its hostile suite. The hostile ones do their harm inside a test; as
// in Programs, OUTSIDE stands for a host path the program must not
// create, PORT for a loopback port it must not reach, and the program
// prints "OPEN ..." for an attempt that got through and "blocked ..." for
// one that did not, on a line of its own in the runner's output.
type RunnerPrograms struct {
	// Pass's tests pass; Fail's fail an assertion.
	Pass, Fail string
	// CompileError does not compile (for pytest: a syntax error).
	CompileError string
	// Loop's test runs forever.
	Loop string
	// ForkBomb starts processes (or threads) without end; MemoryBomb
	// allocates (and touches) memory without end; Flood prints without
	// end.
	ForkBomb, MemoryBomb, Flood string
	// Network connects to PORT and WriteOutside writes to OUTSIDE, each
	// printing one attempt line.
	Network, WriteOutside string
	// Namespaces makes each of NamespaceAttempts, printing a line for
	// each.
	Namespaces string
}

// Runners are the programs of every test runner of the sandbox's table
// (languages_runners.go), by name.
func Runners() map[string]RunnerPrograms {
	runners := map[string]RunnerPrograms{
		"pytest": {
			Pass:         "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\nclass TestAdd:\n    def test_zero(self, tmp_path):\n        (tmp_path / \"x\").write_text(\"0\")\n        assert add(0, int((tmp_path / \"x\").read_text())) == 0\n",
			Fail:         "def add(a, b):\n    return a - b\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
			CompileError: "def test_add(:\n    assert True\n",
			Loop:         "def test_loop():\n    while True:\n        pass\n",
			ForkBomb:     "import os\n\n\ndef test_fork():\n    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n",
			MemoryBomb:   "def test_memory():\n    a = []\n    while True:\n        a.append(b\"x\" * (1 << 20))\n",
			Flood:        "import os\n\n\ndef test_flood():\n    b = b\"y\" * 65536\n    while True:\n        os.write(1, b)\n",
			// pytest shows a passing test's output nowhere: the line is
			// printed at exit, once pytest has put stdout back.
			Network:      "import atexit, socket\n\n\ndef test_connect():\n    try:\n        socket.create_connection((\"127.0.0.1\", PORT), timeout=2)\n        line = \"OPEN connect\"\n    except OSError as e:\n        line = \"blocked connect %s\" % e\n    atexit.register(print, line)\n",
			WriteOutside: "import atexit\n\n\ndef test_write():\n    try:\n        open(OUTSIDE, \"w\").write(\"x\")\n        line = \"OPEN write\"\n    except OSError as e:\n        line = \"blocked write %s\" % e\n    atexit.register(print, line)\n",
		},
		// go test shows a test's output only when it fails: Network and
		// WriteOutside fail theirs.
		"go_test": {
			Pass:         "package main\n\nimport (\n\t\"testing\"\n\n\t\"github.com/stretchr/testify/assert\"\n)\n\nfunc Add(a, b int) int { return a + b }\n\nfunc TestAdd(t *testing.T) {\n\tassert.Equal(t, 5, Add(2, 3))\n}\n",
			Fail:         "package main\n\nimport \"testing\"\n\nfunc Add(a, b int) int { return a - b }\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 3); got != 5 {\n\t\tt.Errorf(\"Add(2, 3) = %d, want 5\", got)\n\t}\n}\n",
			CompileError: "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tx := 1\n}\n",
			Loop:         "package main\n\nimport \"testing\"\n\nfunc TestLoop(t *testing.T) {\n\tfor {\n\t}\n}\n",
			ForkBomb:     "package main\n\nimport (\n\t\"os\"\n\t\"os/exec\"\n\t\"testing\"\n)\n\nfunc TestFork(t *testing.T) {\n\tfor {\n\t\texec.Command(os.Args[0]).Start()\n\t}\n}\n",
			MemoryBomb:   "package main\n\nimport \"testing\"\n\nfunc TestMemory(t *testing.T) {\n\tvar s [][]byte\n\tfor {\n\t\tb := make([]byte, 1<<20)\n\t\tfor i := range b {\n\t\t\tb[i] = 1\n\t\t}\n\t\ts = append(s, b)\n\t}\n}\n",
			Flood:        "package main\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestFlood(t *testing.T) {\n\tb := []byte(\"yyyyyyyyyyyyyyy\\n\")\n\tfor {\n\t\tos.Stdout.Write(b)\n\t}\n}\n",
			Network:      "package main\n\nimport (\n\t\"fmt\"\n\t\"net\"\n\t\"testing\"\n)\n\nfunc TestConnect(t *testing.T) {\n\tif _, err := net.Dial(\"tcp\", \"127.0.0.1:PORT\"); err != nil {\n\t\tfmt.Println(\"blocked connect\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN connect\")\n\t}\n\tt.Fail()\n}\n",
			WriteOutside: "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestWrite(t *testing.T) {\n\tif err := os.WriteFile(OUTSIDE, []byte(\"x\"), 0o644); err != nil {\n\t\tfmt.Println(\"blocked write\", err)\n\t} else {\n\t\tfmt.Println(\"OPEN write\")\n\t}\n\tt.Fail()\n}\n",
		},
		"junit": {
			Pass:         junitHead + "public class Adder {\n    static int add(int a, int b) { return a + b; }\n}\n\nclass AdderTest {\n    @Test\n    void adds() { assertEquals(5, Adder.add(2, 3)); }\n\n    @Test\n    void zero() { assertEquals(0, Adder.add(0, 0)); }\n}\n",
			Fail:         junitHead + "public class Adder {\n    static int add(int a, int b) { return a - b; }\n}\n\nclass AdderTest {\n    @Test\n    void adds() { assertEquals(5, Adder.add(2, 3)); }\n}\n",
			CompileError: junitHead + "public class Adder {\n    static int add(int a, int b) { return \"a\"; }\n}\n",
			Loop:         junitHead + "public class Looper {\n    @Test\n    void loops() { while (true) {} }\n}\n",
			ForkBomb:     junitHead + "public class Bomb {\n    @Test\n    void threads() {\n        while (true) new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) {} }).start();\n    }\n}\n",
			MemoryBomb:   junitHead + "import java.util.*;\n\npublic class Bomb {\n    @Test\n    void memory() {\n        List<long[]> l = new ArrayList<>();\n        while (true) l.add(new long[1 << 20]);\n    }\n}\n",
			Flood:        junitHead + "public class Flood {\n    @Test\n    void flood() {\n        String b = \"y\".repeat(65536);\n        while (true) System.out.print(b);\n    }\n}\n",
			Network:      junitHead + "public class Net {\n    @Test\n    void connect() {\n        try { new java.net.Socket(\"127.0.0.1\", PORT).close(); System.out.println(\"OPEN connect\"); }\n        catch (Exception e) { System.out.println(\"blocked connect \" + e); }\n    }\n}\n",
			WriteOutside: junitHead + "public class Write {\n    @Test\n    void write() {\n        try { new java.io.FileOutputStream(OUTSIDE).close(); System.out.println(\"OPEN write\"); }\n        catch (Exception e) { System.out.println(\"blocked write \" + e); }\n    }\n}\n",
		},
	}
	for name, src := range namespacePrograms() {
		if p, ok := runners[name]; ok {
			p.Namespaces = src
			runners[name] = p
		}
	}
	return runners
}

const junitHead = "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\n"
