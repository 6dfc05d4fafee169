package scorertest

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// ReadJSONL decodes each line of the JSON Lines file at path, lines up to
// 64 MiB long, into a T. It skips the test, saying why, when the file
// cannot be opened (the data sets beside the repository are optional),
// and fails it, naming the line, when a line does not decode.
func ReadJSONL[T any](tb testing.TB, path string) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("data set not available: %v", err)
	}
	defer f.Close()
	var rows []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var row T
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			tb.Fatalf("%s line %d: %v", path, len(rows)+1, err)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return rows
}
