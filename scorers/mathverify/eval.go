package mathverify

import (
	"math"
	"math/big"
)

// maxExactBits bounds the size of an exact intermediate value (numerator
// plus denominator); beyond it the evaluator goes on in floating point.
const maxExactBits = 1 << 15

// maxExactFact is the largest n whose n! is computed exactly (3000! has
// about 30,000 bits, within maxExactBits).
const maxExactFact = 3000

// value is a number: exact when r is not nil; f always holds its float64
// approximation (±Inf when too large, NaN when undefined: 1/0, √-1).
type value struct {
	r *big.Rat
	f float64
}

func exact(r *big.Rat) value {
	f, _ := r.Float64()
	return value{r: r, f: f}
}

func inexact(f float64) value { return value{f: f} }

// evaluator evaluates expressions, spending steps from b. mag records the
// largest magnitude met among the intermediate results since it was last
// reset: the scale of the rounding errors of a floating point evaluation.
type evaluator struct {
	b   *budget
	mag float64
}

func (e *evaluator) note(f float64) float64 {
	if a := math.Abs(f); a > e.mag && !math.IsInf(a, 0) {
		e.mag = a
	}
	return f
}

// exact evaluates an expression without free variables, exactly while the
// operations allow it (+ - × ÷, integer powers, roots of perfect squares,
// factorials, binomials, |·|, ⌊·⌋, ⌈·⌉) and in floating point after.
func (e *evaluator) exact(n *node) (value, error) {
	if err := e.b.spend(1); err != nil {
		return value{}, err
	}
	switch n.kind {
	case nNum:
		return value{r: n.val, f: e.note(n.f)}, nil
	case nVar:
		return inexact(math.NaN()), nil
	case nConst:
		return inexact(e.note(constant(n.name))), nil
	case nSum, nProd:
		f, err := e.bigOp(n, &env{})
		return inexact(f), err
	}
	if n.evaluated {
		e.mag = max(e.mag, n.exactMag)
		return n.exact, nil
	}
	outer := e.mag
	e.mag = 0
	defer func() { n.exactMag, e.mag = e.mag, max(outer, e.mag) }()
	var buf [2]value
	args := buf[:0]
	for _, a := range n.args {
		v, err := e.exact(a)
		if err != nil {
			return value{}, err
		}
		args = append(args, v)
	}
	// An operation allocates: it costs more than a step.
	if err := e.b.spend(opCost); err != nil {
		return value{}, err
	}
	v, err := e.exactOp(n, args)
	if err != nil {
		return value{}, err
	}
	if v.r != nil {
		// Charge the size of the result: big numbers cost more.
		if err := e.b.spend(ratWords(v.r)); err != nil {
			return value{}, err
		}
	}
	e.note(v.f)
	n.exact, n.evaluated = v, true
	return v, nil
}

// opCost is the price in steps of an exact operation on small numbers.
const opCost = 4

func (e *evaluator) exactOp(n *node, a []value) (value, error) {
	allExact := true
	for _, v := range a {
		allExact = allExact && v.r != nil
	}
	if !allExact || n.kind == nFunc {
		return inexactOp(n, a), nil
	}
	switch n.kind {
	case nAdd, nSub, nMul, nDiv:
		return e.arithmetic(n, a[0], a[1])
	case nNeg:
		return exact(new(big.Rat).Neg(a[0].r)), nil
	case nAbs:
		return exact(new(big.Rat).Abs(a[0].r)), nil
	case nFloor, nCeil:
		q := new(big.Int).Div(a[0].r.Num(), a[0].r.Denom()) // Euclidean: floor for a positive denominator
		if n.kind == nCeil && !a[0].r.IsInt() {
			q.Add(q, big.NewInt(1))
		}
		return exact(new(big.Rat).SetInt(q)), nil
	case nPow:
		return e.pow(a[0], a[1])
	case nSqrt:
		if r, ok := ratSqrt(a[0].r); ok {
			return exact(r), nil
		}
	case nFact:
		if x := a[0].r; x.IsInt() && x.Sign() >= 0 && x.Num().IsInt64() && x.Num().Int64() <= maxExactFact {
			k := x.Num().Int64()
			if err := e.b.spend(int(k)); err != nil {
				return value{}, err
			}
			return exact(new(big.Rat).SetInt(new(big.Int).MulRange(1, k))), nil
		}
	case nBinom:
		x, y := a[0].r, a[1].r
		if x.IsInt() && y.IsInt() && x.Num().IsInt64() && y.Num().IsInt64() {
			nn, k := x.Num().Int64(), y.Num().Int64()
			if nn >= 0 && k >= 0 && k <= nn && nn <= maxExactFact {
				if err := e.b.spend(int(k)); err != nil {
					return value{}, err
				}
				return exact(new(big.Rat).SetInt(new(big.Int).Binomial(nn, k))), nil
			}
		}
	}
	return inexactOp(n, a), nil
}

// inexactOp computes n's operation in floating point.
func inexactOp(n *node, a []value) value {
	fs := make([]float64, len(a))
	for i, v := range a {
		fs[i] = v.f
	}
	return inexact(floatOp(n, fs))
}

// arithmetic adds, subtracts, multiplies or divides two exact values:
// exactly while their sizes stay within maxExactBits, and a division by
// zero is NaN.
func (e *evaluator) arithmetic(n *node, a, b value) (value, error) {
	x, y := a.r, b.r
	if ratBits(x)+ratBits(y) > maxExactBits {
		return inexact(floatOp(n, []float64{a.f, b.f})), nil
	}
	// Multiplying (and reducing) big numbers costs about the product of
	// their sizes in words.
	if err := e.b.spend(ratWords(x) * ratWords(y) / 16); err != nil {
		return value{}, err
	}
	r := new(big.Rat)
	switch n.kind {
	case nAdd:
		r.Add(x, y)
	case nSub:
		r.Sub(x, y)
	case nMul:
		r.Mul(x, y)
	default:
		if y.Sign() == 0 {
			return inexact(math.NaN()), nil
		}
		r.Quo(x, y)
	}
	return exact(r), nil
}

// pow raises an exact base to an exact exponent: exactly for an integer
// exponent when the result stays within maxExactBits.
func (e *evaluator) pow(base, exp value) (value, error) {
	x, y := base.r, exp.r
	if !y.IsInt() || !y.Num().IsInt64() {
		if f, ok := realPow(base.f, exp); ok && base.f < 0 {
			return inexact(f), nil
		}
		return inexact(math.Pow(base.f, exp.f)), nil
	}
	k := y.Num().Int64()
	if x.Sign() == 0 {
		switch {
		case k == 0:
			return exact(big.NewRat(1, 1)), nil
		case k < 0:
			return inexact(math.NaN()), nil
		}
		return exact(new(big.Rat)), nil
	}
	absK := k
	if absK < 0 {
		absK = -absK
	}
	if absK > maxExactBits || int64(ratBits(x))*absK > maxExactBits {
		return inexact(math.Pow(base.f, exp.f)), nil
	}
	words := int(int64(ratBits(x))*absK/64) + 1
	if err := e.b.spend(words * words / 16); err != nil {
		return value{}, err
	}
	kk := big.NewInt(absK)
	num := new(big.Int).Exp(x.Num(), kk, nil)
	den := new(big.Int).Exp(x.Denom(), kk, nil)
	if k < 0 {
		num, den = den, num
	}
	return exact(new(big.Rat).SetFrac(num, den)), nil
}

// ratSqrt returns the square root of r when r is the square of a rational.
func ratSqrt(r *big.Rat) (*big.Rat, bool) {
	if r.Sign() < 0 {
		return nil, false
	}
	num, den := new(big.Int).Sqrt(r.Num()), new(big.Int).Sqrt(r.Denom())
	if new(big.Int).Mul(num, num).Cmp(r.Num()) != 0 || new(big.Int).Mul(den, den).Cmp(r.Denom()) != 0 {
		return nil, false
	}
	return new(big.Rat).SetFrac(num, den), true
}

func ratBits(r *big.Rat) int { return r.Num().BitLen() + r.Denom().BitLen() }

func ratWords(r *big.Rat) int { return ratBits(r)/64 + 1 }

func constant(name string) float64 {
	switch name {
	case "pi":
		return math.Pi
	case "e":
		return math.E
	case "inf":
		return math.Inf(1)
	}
	return math.NaN()
}

// env gives values to the free variables of an expression: vals[i] is the
// value of names[i].
type env struct {
	names []string
	vals  []float64
}

func (v *env) lookup(name string) float64 {
	for i, n := range v.names {
		if n == name {
			return v.vals[i]
		}
	}
	return math.NaN()
}

// float evaluates n in floating point with the variables of env.
func (e *evaluator) float(n *node, vars *env) (float64, error) {
	if err := e.b.spend(1); err != nil {
		return 0, err
	}
	switch n.kind {
	case nNum:
		return e.note(n.f), nil
	case nVar:
		return e.note(vars.lookup(n.name)), nil
	case nConst:
		return e.note(constant(n.name)), nil
	case nSum, nProd:
		return e.bigOp(n, vars)
	}
	var buf [2]float64
	args := buf[:0]
	for _, a := range n.args {
		f, err := e.float(a, vars)
		if err != nil {
			return 0, err
		}
		args = append(args, f)
	}
	if n.kind == nPow && args[0] < 0 && args[1] != math.Trunc(args[1]) && !n.args[1].hasVars() {
		// x^{2/3} at a negative x: the real root, as \sqrt[3]{x}^2 is.
		exp, err := e.exact(n.args[1])
		if err != nil {
			return 0, err
		}
		if f, ok := realPow(args[0], exp); ok {
			return e.note(f), nil
		}
	}
	return e.note(floatOp(n, args)), nil
}

// realPow raises a negative base to a rational power p/q with q odd: the
// real q-th root to the p-th power (x^{1/3} of -8 is -2, as \sqrt[3]{-8}),
// where the principal complex value is not a real number. ok is false for
// an exponent that is not exact or has an even denominator.
func realPow(base float64, exp value) (f float64, ok bool) {
	if exp.r == nil || exp.r.Denom().Bit(0) == 0 {
		return 0, false
	}
	f = math.Pow(-base, exp.f)
	if exp.r.Num().Bit(0) == 1 {
		f = -f
	}
	return f, true
}

// maxEvalTerms bounds the terms of a sum or product that the evaluator
// computes; beyond it the value is undefined (NaN).
const maxEvalTerms = 10_000

// bigOp computes a sum or product in floating point when its bounds are
// integers at vars (n - 1 at n = 4), the index bound to each integer in
// turn; NaN when they are not. An empty sum is 0, an empty product 1.
func (e *evaluator) bigOp(n *node, vars *env) (float64, error) {
	lo, err := e.float(n.args[1], vars)
	if err != nil {
		return 0, err
	}
	hi, err := e.float(n.args[2], vars)
	if err != nil {
		return 0, err
	}
	if lo != math.Round(lo) || hi != math.Round(hi) || hi-lo >= maxEvalTerms {
		return math.NaN(), nil // NaN and ±Inf too
	}
	inner := &env{names: append([]string{n.name}, vars.names...), vals: append([]float64{0}, vars.vals...)}
	acc := 0.0
	if n.kind == nProd {
		acc = 1
	}
	for i := lo; i <= hi; i++ {
		inner.vals[0] = i
		f, err := e.float(n.args[0], inner)
		if err != nil {
			return 0, err
		}
		if n.kind == nSum {
			acc += f
		} else {
			acc *= f
		}
	}
	return e.note(acc), nil
}

// floatOp applies the operation of n to float64 arguments.
func floatOp(n *node, a []float64) float64 {
	switch n.kind {
	case nAdd:
		return a[0] + a[1]
	case nSub:
		return a[0] - a[1]
	case nMul:
		return a[0] * a[1]
	case nDiv:
		if a[1] == 0 {
			return math.NaN()
		}
		return a[0] / a[1]
	case nPow:
		if a[0] == 0 && a[1] < 0 {
			return math.NaN()
		}
		return math.Pow(a[0], a[1])
	case nNeg:
		return -a[0]
	case nSqrt:
		return math.Sqrt(a[0])
	case nRoot:
		x, k := a[0], a[1]
		if k == math.Trunc(k) && math.Mod(k, 2) == 1 && x < 0 {
			return -math.Pow(-x, 1/k) // odd roots of negative numbers
		}
		return math.Pow(x, 1/k)
	case nAbs:
		return math.Abs(a[0])
	case nFloor:
		return math.Floor(a[0])
	case nCeil:
		return math.Ceil(a[0])
	case nFact:
		if a[0] < 0 && a[0] == math.Trunc(a[0]) {
			return math.NaN()
		}
		return math.Gamma(a[0] + 1)
	case nBinom:
		x, k := a[0], a[1]
		if x == math.Trunc(x) && k == math.Trunc(k) && (k < 0 || k > x) && x >= 0 {
			return 0
		}
		return math.Gamma(x+1) / (math.Gamma(k+1) * math.Gamma(x-k+1))
	case nFunc:
		return function(n.name, a)
	}
	return math.NaN() // a ± left unexpanded, or a structure: not a number
}

// unary holds the functions of one argument, by name.
var unary = map[string]func(float64) float64{
	"sin":    math.Sin,
	"cos":    math.Cos,
	"tan":    math.Tan,
	"sec":    func(x float64) float64 { return 1 / math.Cos(x) },
	"csc":    func(x float64) float64 { return 1 / math.Sin(x) },
	"cot":    func(x float64) float64 { return 1 / math.Tan(x) },
	"arcsin": math.Asin,
	"arccos": math.Acos,
	"arctan": math.Atan,
	"sinh":   math.Sinh,
	"cosh":   math.Cosh,
	"tanh":   math.Tanh,
	"exp":    math.Exp,
	"ln":     math.Log,
	"log":    math.Log, // natural, as in SymPy and Math-Verify
	"lg":     math.Log10,
	"sqrt":   math.Sqrt,
}

func function(name string, a []float64) float64 {
	x := a[0]
	if name == "log" && len(a) == 2 {
		return math.Log(x) / math.Log(a[1])
	}
	if f, ok := unary[name]; ok {
		return f(x)
	}
	return math.NaN()
}
