package langdetect

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestPyRandom checks the Mersenne Twister against CPython's
// random.Random(0): random.random() twice, then random.choice(range(1000))
// three times and random.gauss(0, 1) twice, values printed by CPython 3.11.
// gauss may be an ulp off: Go's math.Sin and Cos are not always correctly
// rounded, glibc's are.
func TestPyRandom(t *testing.T) {
	r := newPyRandom(0)
	for i, want := range []float64{0.8444218515250481, 0.7579544029403025} {
		if got := r.random(); got != want {
			t.Errorf("random() #%d = %v, CPython %v", i, got, want)
		}
	}
	for i, want := range []int{430, 41, 265} {
		if got := r.randbelow(1000); got != want {
			t.Errorf("choice #%d = %d, CPython %d", i, got, want)
		}
	}
	for i, want := range []float64{1.1265434960496987, -0.2483595418265132} {
		if got := r.gauss(); math.Abs(got-want) > math.Abs(want)*0x1p-52 {
			t.Errorf("gauss #%d = %v, CPython %v", i, got, want)
		}
	}
}

// TestSeededLangdetect compares Detect with langdetect.detect (seed 0) on
// the texts of ../testdata/parity.jsonl.
func TestSeededLangdetect(t *testing.T) {
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/parity.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n, bad := 0, 0
	for sc.Scan() {
		var row struct{ Text, Lang string }
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		n++
		got, ok := d.Detect(row.Text)
		if !ok {
			got = ""
		}
		if got != row.Lang {
			bad++
			t.Errorf("langdetect %q, Detect %q: %.100q", row.Lang, got, row.Text)
		}
	}
	t.Logf("%d texts, %d differ", n, bad)
}
