package extract

import (
	"strings"
	"testing"
)

// extractCase is one input of an extractor and what it should find; want ""
// means nothing is found.
type extractCase struct {
	in, want string
}

func runExtract(t *testing.T, name string, f func(string) (string, bool), cases []extractCase) {
	t.Helper()
	for _, c := range cases {
		got, ok := f(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s(%q) = %q, %v; want %q, %v", name, c.in, got, ok, c.want, c.want != "")
		}
	}
}

func TestBoxed(t *testing.T) {
	runExtract(t, "Boxed", Boxed, []extractCase{
		{`The answer is \boxed{18}.`, "18"},
		{`$\boxed{\frac{1}{2}}$`, `\frac{1}{2}`},
		{`\boxed{1} then \boxed{2}`, "2"},
		{`\fbox{7}`, "7"},
		{`\boxed{1} then \fbox{2}`, "2"},
		{`\fbox{1} then \boxed{2}`, "2"},
		{`\boxed{\text{a}\{b\}}`, `\text{a}\{b\}`},
		{`\boxed{ 18 }`, " 18 "},
		{`\boxed {18}`, "18"},
		{`so $\boxed 5$`, "5"},
		{`\boxed 42 apples`, "42"},
		{"\\boxed 42\nmore", "42"},
		{`\boxed{\boxed{3}}`, "3"},
		{`\boxedanswer{3}`, ""},
		{`\boxed{3} and \boxedanswer{4}`, "3"},
		{`\boxed{18`, ""},
		{`\boxed{18} and \boxed{19`, ""}, // the last box is unclosed
		{`\boxed{{18}`, ""},
		{`\boxed{}`, ""},
		{`\boxed{  }`, ""},
		{`\boxed`, ""},
		{`\boxed `, ""},
		{`\boxed $`, ""},
		{`boxed{18}`, ""},
		{``, ""},
		{`\\\\`, ""},
		{`}{\boxed{a}b}}`, "a"},
	})
}

func TestAnswerTag(t *testing.T) {
	runExtract(t, "AnswerTag", AnswerTag, []extractCase{
		{"<think>x</think><answer>18</answer>", "18"},
		{"<answer>1</answer> <answer>2</answer>", "2"},
		{"<answer>\n 18 \n</answer>", "\n 18 \n"},
		{"<answer><answer>3</answer>", "3"},
		{"<answer>1</answer> <answer>2", "1"},
		{"<answer>1</answer>2</answer>", "1"},
		{"<answer> </answer>2</answer>", ""},
		{"<answer></answer>", ""},
		{"<answer> </answer>", ""},
		{"</answer><answer>", ""},
		{"<answer>18", ""},
		{"18</answer>", ""},
		{"<ANSWER>18</ANSWER>", ""},
		{"", ""},
	})
}

func TestGSM8K(t *testing.T) {
	runExtract(t, "GSM8K", GSM8K, []extractCase{
		{"She makes 9 * 2 = $<<9*2=18>>18 every day.\n#### 18", "18"},
		{"#### 1,600\n", "1,600"},
		{"#### -3", "-3"},
		{"#### 18\r\n", "18"},
		{"#### 1\nmore\n#### 2", "2"},
		{"####18", "18"},
		{"#####  7 ", "7"},
		{"#### The answer is 5\nok", "The answer is 5"},
		{"#### \n18", ""},
		{"####", ""},
		{"#### ", ""},
		{"### 18", ""},
		{"", ""},
	})
}

func TestLastNumber(t *testing.T) {
	runExtract(t, "LastNumber", LastNumber, []extractCase{
		{"The answer is 18.", "18"},
		{"18", "18"},
		{"costs $1,234.50 in total", "1,234.50"},
		{"1,234,567 people", "1,234,567"},
		{"x = -3", "-3"},
		{"-3", "-3"},
		{"(-3)", "-3"},
		{"pages 10-15", "15"},
		{"x-5", "5"},
		{"f(x)-5", "5"},
		{"a - 5", "5"},
		{"it is 3/4 of it", "3/4"},
		{"-3/4", "-3/4"},
		{"1.5/2", "1.5/2"},
		{"12/25/2023", "2023"},
		{"is .5", ".5"},
		{"is -.5", "-.5"},
		{"1.2.3", "2.3"},
		{"4,5", "5"},
		{"1,2345", "2345"},
		{"1234,567", "567"},
		{"12,34,567", "34,567"},
		{",5", "5"},
		{"5,", "5"},
		{"18, then 19,", "19"},
		{"3.14159!", "3.14159"},
		{"50%", "50"},
		{"$<<9*2=18>>18 every day", "18"},
		{"1e-3", "3"},
		{"no digits here", ""},
		{"", ""},
		{"-", ""},
		{"٣", ""}, // only ASCII digits count
	})
}

func TestRegexp(t *testing.T) {
	cases := []struct {
		pattern string
		cases   []extractCase
	}{
		{`A:\s*\$?(-?[\d,]*\.?\d+)`, []extractCase{
			{"A: 5\nA: $18", "18"},
			{"no answer", ""},
		}},
		{`answer is (?P<answer>\w+)|final: (\w+)`, []extractCase{
			{"the answer is blue", "blue"},
			{"the answer is blue, final: red", "blue"}, // last match lacks the answer group
		}},
		{`\d+`, []extractCase{{"1 22 333", "333"}}},
		{`(?i)ANSWER: (\S*)`, []extractCase{
			{"answer: 7 answer: ", "7"}, // the last group is empty
			{"Answer: x", "x"},
		}},
		{`^(\d+)$`, []extractCase{{"12", "12"}, {"12\n13", ""}}},
		{`(?m)^(\d+)$`, []extractCase{{"12\n13", "13"}}},
	}
	for _, c := range cases {
		re, err := NewRegexp(c.pattern)
		if err != nil {
			t.Fatalf("NewRegexp(%q): %v", c.pattern, err)
		}
		if re.String() != c.pattern {
			t.Errorf("String() = %q, want %q", re.String(), c.pattern)
		}
		runExtract(t, "Regexp "+c.pattern, re.Extract, c.cases)
	}
	if _, err := NewRegexp(`(`); err == nil {
		t.Error("NewRegexp(`(`) succeeded")
	}
}

func TestLastIndex(t *testing.T) {
	for _, c := range []struct{ s, sub string }{
		{"", "##"}, {"#", "##"}, {"##", "##"}, {"#####", "####"}, {"a####b####c", "####"},
		{strings.Repeat("ab", 100), "ba"}, {"abc", "x"}, {"</answer></answer>x", "</answer>"},
		{"/answer>", "</answer>"}, {"<answer", "<answer>"},
	} {
		for k := range len(c.sub) {
			if got, want := lastIndex(c.s, c.sub, k), strings.LastIndex(c.s, c.sub); got != want {
				t.Errorf("lastIndex(%q, %q, %d) = %d, want %d", c.s, c.sub, k, got, want)
			}
		}
	}
}

func FuzzLastIndex(f *testing.F) {
	f.Add("a####b####c", "####", uint8(1))
	f.Fuzz(func(t *testing.T, s, sub string, k uint8) {
		if sub == "" {
			return
		}
		if got, want := lastIndex(s, sub, int(k)%len(sub)), strings.LastIndex(s, sub); got != want {
			t.Fatalf("lastIndex(%q, %q, %d) = %d, want %d", s, sub, int(k)%len(sub), got, want)
		}
	})
}

func TestFirstBoxed(t *testing.T) {
	runExtract(t, "FirstBoxed", FirstBoxed, []extractCase{
		{`\boxed{1} then \boxed{2}`, "1"},
		{`$\boxed{\frac{1}{2}}$ or \boxed{3}`, `\frac{1}{2}`},
		{`\fbox{1} then \boxed{2}`, "2"},
		{`\boxed 5 then \boxed{2}`, "2"},
		{`\boxed{1 then \boxed{2}`, ""},
		{`\boxed{} then \boxed{2}`, ""},
		{`no box`, ""},
	})
}
