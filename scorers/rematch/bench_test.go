package rematch

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"testing"
)

// longText returns n bytes of reasoning-model-like text: paragraphs, with
// a "Step k:" line, a numbered line and a bullet about every 2 KiB.
func longText(n int) string {
	var b strings.Builder
	for k := 1; b.Len() < n; k++ {
		b.WriteString("Okay, so the total is the price times the number of items, which gives us the amount she paid. ")
		if k%20 == 0 {
			fmt.Fprintf(&b, "\nStep %d: multiply.\n%d. then add\n- a bullet\n", k/20, k%9+1)
		}
		if k%8 == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()[:n]
}

// BenchmarkEngines runs open-r1's reasoning_steps pattern (count mode: the
// first 3 matches, and all of them) on every engine compiled in, side by
// side, at 4 and 32 KiB:
//
//	go test -run XXX -bench Engines ./scorers/rematch/                 # regexp, re2_wasm, scan
//	go test -tags re2_cgo -run XXX -bench Engines ./scorers/rematch/   # regexp, re2, scan
func BenchmarkEngines(b *testing.B) {
	tree, err := syntax.Parse(patterns[0].expr, patterns[0].flags)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{4 << 10, 32 << 10} {
		text := longText(size)
		for _, n := range []int{3, -1} {
			for _, e := range engines() {
				r := e.compile(tree)
				if r == nil {
					continue
				}
				b.Run(fmt.Sprintf("%dKiB/n=%d/%s", size>>10, n, e.name), func(b *testing.B) {
					b.SetBytes(int64(size))
					for b.Loop() {
						r.FindAllStringIndex(text, n)
					}
				})
			}
		}
	}
}
