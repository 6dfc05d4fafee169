package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFetchFiles: what a program may leave in its work dir, read back
// from inside it only, a fifo without waiting for a writer, a huge sparse
// file without reading it.
func TestFetchFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", []byte("secret"))
	write("sub/b.bin", []byte{0, 1, 2, 255})
	write("empty", nil)
	big := bytes.Repeat([]byte("x"), MaxFetchFileBytes)
	write("big1", big)
	write("big2", big)
	for link, target := range map[string]string{
		"shadow":   "/etc/shadow",
		"etc":      "/etc",
		"up":       "../../../../etc/passwd",
		"inside":   "a.txt",
		"dangling": "nowhere",
		"loop":     "loop",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	sparse.Close()

	names := []string{"a.txt", "sub/b.bin", "empty", "a.txt", "missing", "sub/missing", "a.txt/x",
		"shadow", "up", "etc/passwd", "inside", "dangling", "loop", "fifo", "sparse", "sub", "big1", "big2"}
	files, leftOut, err := fetchFiles(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "secret", "sub/b.bin": "\x00\x01\x02\xff", "empty": "", "inside": "secret", "big1": string(big)}
	for name, data := range want {
		if got, ok := files[name]; !ok || string(got) != data {
			t.Errorf("%s: got %d bytes (present %v), want %d", name, len(got), ok, len(data))
		}
	}
	for name := range files {
		if _, ok := want[name]; !ok {
			t.Errorf("%s was fetched (%d bytes), want it left out", name, len(files[name]))
		}
	}
	// Left out with a reason: each names what it is, not what it points to.
	reasons := map[string]string{
		"shadow": "not read", "up": "not read", "etc/passwd": "not read", "loop": "symbolic link",
		"fifo": "a fifo", "sub": "a directory", "sparse": "over the 8 MiB", "big2": "over what is left",
	}
	for name, part := range reasons {
		if why, ok := leftOut[name]; !ok || !strings.Contains(why, part) {
			t.Errorf("%s left out with %q, want a reason with %q", name, why, part)
		}
	}
	// Not there: left out silently, as SandboxFusion leaves it out.
	for _, name := range []string{"missing", "sub/missing", "a.txt/x", "dangling"} {
		if why, ok := leftOut[name]; ok {
			t.Errorf("%s is not there, left out with %q, want silently", name, why)
		}
	}
	for name := range leftOut {
		if _, ok := reasons[name]; !ok {
			t.Errorf("%s left out with %q, want no reason", name, leftOut[name])
		}
	}
	if _, _, err := fetchFiles(filepath.Join(dir, "gone"), names); err == nil {
		t.Error("a work dir that is not there: no error")
	}
}

// TestCheckFetchFiles: the names a job may fetch are those it may write.
func TestCheckFetchFiles(t *testing.T) {
	for _, names := range [][]string{{"/etc/passwd"}, {"../../etc/passwd"}, {"a/../../b"}, {""}, {"a\x00b"}, make([]string, MaxFetchFiles+1)} {
		if err := checkFetchFiles(names); err == nil {
			t.Errorf("%q: no error", names[0])
		}
	}
	if err := checkFetchFiles([]string{"a.txt", "sub/b.bin"}); err != nil {
		t.Error(err)
	}
}
