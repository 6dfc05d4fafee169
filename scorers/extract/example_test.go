package extract_test

import (
	"fmt"

	"github.com/rewardd/rewardd/scorers/extract"
)

func ExampleBoxed() {
	fmt.Println(extract.Boxed(`First \boxed{1}, then $\boxed{\frac{3}{4}}$.`))
	fmt.Println(extract.Boxed(`\boxed{18`))
	// Output:
	// \frac{3}{4} true
	//  false
}

func ExampleLastNumber() {
	fmt.Println(extract.LastNumber("She earns $1,234.50, so the answer is 18."))
	// Output: 18 true
}

func ExampleParseNumber() {
	a, _ := extract.ParseNumber(`\frac{3}{4}`)
	b, _ := extract.ParseNumber("0.75")
	c, _ := extract.ParseNumber("$1,000")
	d, _ := extract.ParseNumber("1000.0")
	fmt.Println(a.Equal(b, 0), c.Equal(d, 0), c.IsInt(), d.IsInt())
	// Output: true true true false
}

func ExampleRegexp() {
	re, err := extract.NewRegexp(`Final answer: (?P<answer>\S+)`)
	if err != nil {
		panic(err)
	}
	fmt.Println(re.Extract("Final answer: 3\nWait, no.\nFinal answer: 4"))
	// Output: 4 true
}
