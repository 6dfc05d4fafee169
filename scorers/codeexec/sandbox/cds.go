package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A JVM compiler (javac) spends most of a small program's compile loading
// and verifying its own classes. The pool dumps them once per machine into
// a class-data-sharing archive (JDK 13+'s dynamic AppCDS: -XX:
// ArchiveClassesAtExit, on top of the JDK's default archive), outside the
// sandbox, from a trusted program of its own, and every compile maps it
// (-XX:SharedArchiveFile). An archive the JVM finds unusable (another JDK
// build, other flags) is ignored by the JVM, which then loads the classes
// as without it: the compile is slower, never different.

// archiveProgram is what the compiler compiles while its classes are
// dumped: the imports and constructs a contest program uses.
const archiveProgram = `import java.io.*;
import java.util.*;
import java.util.stream.*;

public class Main {
    record Pair(int a, long b) {}
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(in.readLine());
        int n = Integer.parseInt(st.nextToken());
        List<Pair> xs = new ArrayList<>();
        Map<Integer, Long> m = new HashMap<>();
        for (int i = 0; i < n; i++) { xs.add(new Pair(i, (long) i * i)); m.merge(i % 7, 1L, Long::sum); }
        xs.sort(Comparator.comparingLong(Pair::b));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));
        out.println(xs.stream().map(p -> String.valueOf(p.a())).collect(Collectors.joining(" ")) + m.size());
        out.flush();
    }
}
`

// buildCompilerArchive returns the path of lang's compiler's class-data
// archive, dumping it if this machine has none for this compiler
// (toolchainID) and these flags.
func buildCompilerArchive(ctx context.Context, cacheDir string, lang *Language) (string, error) {
	flags := slices.DeleteFunc(slices.Clone(lang.Compile[1:]), func(a string) bool { return !strings.HasPrefix(a, "-J") })
	dir := filepath.Join(cacheDir, "cds-"+lang.Name+"-"+hash([]byte(toolchainID(lang.Compile[0])), []byte(strings.Join(flags, "\x00"))))
	err := buildOnce(dir, func(tmp string) error {
		work := filepath.Join(tmp, "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			return err
		}
		src := filepath.Join(work, "Main.java")
		if err := os.WriteFile(src, []byte(archiveProgram), 0o644); err != nil {
			return err
		}
		archive := filepath.Join(tmp, "compiler.jsa")
		args := append(append([]string{"-J-XX:ArchiveClassesAtExit=" + archive}, flags...), "-d", work, src)
		if _, err := output(ctx, nil, lang.Compile[0], args...); err != nil {
			return err
		}
		if err := os.RemoveAll(work); err != nil {
			return err
		}
		return os.Chmod(archive, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("archive the compiler's classes: %w", err)
	}
	return filepath.Join(dir, "compiler.jsa"), nil
}
