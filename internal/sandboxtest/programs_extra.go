package sandboxtest

// extraLanguagePrograms are the programs of the sandbox's
// languages_extra.go, by name. Verilog has no Network and no Namespaces
// program: its Unreachable says why.
func extraLanguagePrograms() map[string]Programs {
	return map[string]Programs{
		"csharp": {
			Echo:         "public class Program {\n    public static void Main() {\n        Console.OpenStandardInput().CopyTo(Console.OpenStandardOutput());\n    }\n}\n",
			CompileError: "public class Program {\n    public static void Main() { int x = ; }\n}\n",
			RuntimeError: "public class Program {\n    public static void Main(string[] a) { Console.WriteLine(a[a.Length + 2]); }\n}\n",
			Loop:         "public class Program {\n    public static void Main() { for (;;) {} }\n}\n",
			// Children's output to pipes: Mono writes its crash reports (a
			// child that cannot start a thread) to stdout.
			ForkBomb:   "using System.Diagnostics;\npublic class Program {\n    public static void Main() {\n        var p = new ProcessStartInfo(\"/usr/bin/mono\", \"main.exe\") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };\n        for (;;) { try { Process.Start(p); } catch (Exception) {} }\n    }\n}\n",
			MemoryBomb: "public class Program {\n    public static void Main() {\n        var l = new List<byte[]>();\n        for (;;) { var b = new byte[1 << 20]; for (int i = 0; i < b.Length; i += 4096) b[i] = 1; l.Add(b); }\n    }\n}\n",
			Flood:      "public class Program {\n    public static void Main() {\n        var o = Console.OpenStandardOutput();\n        var b = new byte[65536];\n        for (int i = 0; i < b.Length; i++) b[i] = (byte)'y';\n        for (;;) o.Write(b, 0, b.Length);\n    }\n}\n",
			// Mono's TcpClient(host, port) leaves out a socket it could not make.
			Network:      "using System.Net.Sockets;\npublic class Program {\n    public static void Main() {\n        try {\n            var s = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);\n            s.Connect(\"127.0.0.1\", PORT);\n            Console.WriteLine(\"OPEN connect\");\n        } catch (Exception e) { Console.WriteLine(\"blocked connect \" + e.GetType().Name); }\n    }\n}\n",
			WriteOutside: "public class Program {\n    public static void Main() {\n        try { File.WriteAllText(OUTSIDE, \"x\"); Console.WriteLine(\"OPEN write\"); }\n        catch (Exception e) { Console.WriteLine(\"blocked write \" + e.GetType().Name); }\n    }\n}\n",
		},
		"kotlin_script": {
			Echo:         "System.out.write(System.`in`.readBytes())\nSystem.out.flush()\n",
			CompileError: "val x: Int = \"a\"\n",
			RuntimeError: "throw Exception(\"no\")\n",
			Loop:         "while (true) {}\n",
			ForkBomb:     "while (true) try { ProcessBuilder(\"/usr/bin/java\", \"-version\").start() } catch (e: Throwable) {}\n",
			MemoryBomb:   "val l = ArrayList<ByteArray>()\nwhile (true) { val b = ByteArray(1 shl 20); java.util.Arrays.fill(b, 1); l.add(b) }\n",
			Flood:        "val b = (\"y\".repeat(65535) + \"\\n\").toByteArray()\nwhile (true) System.out.write(b, 0, b.size)\n",
			Network:      "try { java.net.Socket(\"127.0.0.1\", PORT); println(\"OPEN connect\") } catch (e: Exception) { println(\"blocked connect \" + e) }\n",
			WriteOutside: "try { java.io.File(OUTSIDE).writeText(\"x\"); println(\"OPEN write\") } catch (e: Exception) { println(\"blocked write \" + e) }\n",
		},
		"scala": {
			Echo:         "object Main {\n  def main(args: Array[String]): Unit = {\n    val b = new Array[Byte](65536)\n    var n = System.in.read(b)\n    while (n > 0) { System.out.write(b, 0, n); n = System.in.read(b) }\n    System.out.flush()\n  }\n}\n",
			CompileError: "object Main {\n  def main(args: Array[String]): Unit = { val x: Int = \"a\" }\n}\n",
			RuntimeError: "object Main {\n  def main(args: Array[String]): Unit = println(args(args.length + 2))\n}\n",
			Loop:         "object Main {\n  def main(args: Array[String]): Unit = while (true) {}\n}\n",
			ForkBomb:     "object Main {\n  def main(args: Array[String]): Unit =\n    while (true) try { new ProcessBuilder(\"/usr/bin/java\", \"-cp\", \".\", \"Main\").start() } catch { case _: Throwable => }\n}\n",
			MemoryBomb:   "object Main {\n  def main(args: Array[String]): Unit = {\n    val l = new java.util.ArrayList[Array[Byte]]()\n    while (true) { val b = new Array[Byte](1 << 20); java.util.Arrays.fill(b, 1.toByte); l.add(b) }\n  }\n}\n",
			Flood:        "object Main {\n  def main(args: Array[String]): Unit = {\n    val b = (\"y\" * 65535 + \"\\n\").getBytes\n    while (true) System.out.write(b, 0, b.length)\n  }\n}\n",
			Network:      "object Main {\n  def main(args: Array[String]): Unit =\n    try { new java.net.Socket(\"127.0.0.1\", PORT); println(\"OPEN connect\") }\n    catch { case e: Exception => println(\"blocked connect \" + e) }\n}\n",
			WriteOutside: "object Main {\n  def main(args: Array[String]): Unit =\n    try { java.nio.file.Files.write(java.nio.file.Paths.get(OUTSIDE), \"x\".getBytes); println(\"OPEN write\") }\n    catch { case e: Exception => println(\"blocked write \" + e) }\n}\n",
		},
		"sql": {
			Echo:         "CREATE TABLE s(x);\n.import --ascii /dev/stdin s\n.mode list\n.separator \"\" \"\"\nSELECT x FROM s;\n",
			CompileError: "SELEC 1;\n",
			RuntimeError: "SELECT abs(-9223372036854775808);\n",
			Loop:         "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\n",
			ForkBomb:     ".shell sqlite3 :memory: '.read main.sql' &\n.shell sqlite3 :memory: '.read main.sql'\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\n",
			MemoryBomb:   "CREATE TABLE t(x);\nWITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) INSERT INTO t SELECT randomblob(1000000) FROM c;\n",
			Flood:        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT 'yyyyyyyyyyyyyyy' FROM c;\n",
			// .shell quotes again each of its arguments that has a space.
			Network: ".shell bash -c 'exec 3<>/dev/tcp/127.0.0.1/PORT && echo OPEN connect || echo blocked connect'\n",
			// A double-quoted string that names no column is a string
			// (sqlite3's shell keeps SQLite's old rule); writefile is
			// NULL when it cannot write.
			WriteOutside: "SELECT CASE WHEN writefile(OUTSIDE, 'x') IS NULL THEN 'blocked write' ELSE 'OPEN write' END;\n",
		},
		"racket": {
			Echo:         "#lang racket/base\n(require racket/port)\n(copy-port (current-input-port) (current-output-port))\n",
			CompileError: "#lang racket/base\n(define (f x)\n",
			RuntimeError: "#lang racket/base\n(car '())\n",
			Loop:         "#lang racket/base\n(let loop () (loop))\n",
			ForkBomb:     "#lang racket/base\n(require racket/system)\n(let loop () (with-handlers ([(lambda (e) #t) void]) (process \"racket main.rkt\")) (loop))\n",
			MemoryBomb:   "#lang racket/base\n(let loop ([l '()]) (loop (cons (make-bytes (expt 2 20) 1) l)))\n",
			Flood:        "#lang racket/base\n(define b (make-string 65535 #\\y))\n(let loop () (write-string b) (newline) (loop))\n",
			Network:      "#lang racket/base\n(require racket/tcp)\n(with-handlers ([exn:fail? (lambda (e) (displayln \"blocked connect\"))])\n  (tcp-connect \"127.0.0.1\" PORT)\n  (displayln \"OPEN connect\"))\n",
			WriteOutside: "#lang racket/base\n(with-handlers ([exn:fail? (lambda (e) (displayln \"blocked write\"))])\n  (call-with-output-file OUTSIDE (lambda (o) (write-string \"x\" o)))\n  (displayln \"OPEN write\"))\n",
		},
		"verilog": {
			Echo:         "module tb;\n  integer c;\n  initial begin\n    c = $fgetc(32'h8000_0000);\n    while (c != -1) begin\n      $write(\"%c\", c);\n      c = $fgetc(32'h8000_0000);\n    end\n    $finish;\n  end\nendmodule\n",
			CompileError: "module tb;\n  initial x = ;\nendmodule\n",
			RuntimeError: "module tb;\n  initial $fatal(1, \"no\");\nendmodule\n",
			Loop:         "module tb;\n  initial forever #1;\nendmodule\n",
			// vvp starts no process: a bomb of threads.
			ForkBomb:     "module tb;\n  initial forever fork\n    forever #1;\n  join_none\nendmodule\n",
			MemoryBomb:   "module tb;\n  string s;\n  initial begin\n    s = \"yyyyyyyy\";\n    forever s = {s, s};\n  end\nendmodule\n",
			Flood:        "module tb;\n  initial forever $display(\"yyyyyyyyyyyyyyy\");\nendmodule\n",
			WriteOutside: "module tb;\n  integer f;\n  initial begin\n    f = $fopen(OUTSIDE, \"w\");\n    if (f != 0) $display(\"OPEN write\"); else $display(\"blocked write\");\n  end\nendmodule\n",
			Unreachable: "a Verilog program makes no system call of its own and starts no process: Icarus 11 defines no $system, " +
				"its $fopen(\"|cmd\") opens a file of that name, and neither vvp nor its VPI modules import socket, connect, " +
				"fork, exec*, posix_spawn, popen or system (nm -D); vvp loads only the VPI modules the compile names, " +
				"the source's strings and names escaped in test.vvp",
		},
		"d": {
			Echo:         "import std.stdio;\nvoid main() {\n    foreach (ubyte[] b; stdin.byChunk(65536)) stdout.rawWrite(b);\n}\n",
			CompileError: "void main() { int x = \"a\"; }\n",
			RuntimeError: "void main(string[] args) { int[] a; a[args.length + 2] = 1; }\n",
			Loop:         "void main() { for (;;) {} }\n",
			ForkBomb:     "import std.process;\nvoid main() { for (;;) { try { spawnProcess([\"./main\"]); } catch (Exception) {} } }\n",
			MemoryBomb:   "void main() {\n    ubyte[][] a;\n    for (;;) { auto b = new ubyte[](1 << 20); b[] = 1; a ~= b; }\n}\n",
			Flood:        "import std.stdio;\nvoid main() {\n    auto b = new char[](65535); b[] = 'y';\n    for (;;) { stdout.rawWrite(b); stdout.rawWrite(\"\\n\"); }\n}\n",
			Network:      "import std.socket, std.stdio;\nvoid main() {\n    try { new TcpSocket(new InternetAddress(\"127.0.0.1\", PORT)); writeln(\"OPEN connect\"); }\n    catch (Exception e) { writeln(\"blocked connect \", e.msg); }\n}\n",
			WriteOutside: "import std.file, std.stdio;\nvoid main() {\n    try { std.file.write(OUTSIDE, \"x\"); writeln(\"OPEN write\"); }\n    catch (Exception e) { writeln(\"blocked write \", e.msg); }\n}\n",
		},
	}
}
