package aggregate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Epsilon is added to every standard deviation TRL divides by (its literal
// 1e-4 in GRPOTrainer).
const Epsilon = 1e-4

// hatcheryMinVariance is the population variance at or below which Axolotl's
// Hatchery trainer divides by 1 instead of the std.
const hatcheryMinVariance = 1e-8

// Mode selects how the functions' scores are combined. The zero value is
// SumThenNormalize, TRL's default.
type Mode uint8

const (
	// SumThenNormalize is GRPO: sum the weighted scores, then normalize the
	// sum within each group ("sum_then_normalize").
	SumThenNormalize Mode = iota
	// NormalizeThenSum is GDPO: normalize each function within each group,
	// sum with weights, then normalize over the batch ("normalize_then_sum").
	NormalizeThenSum
	// Hatchery is Axolotl's Hatchery trainer: unweighted sum, population std,
	// std 1 for a flat group ("hatchery").
	Hatchery
)

var modeNames = [...]string{
	SumThenNormalize: "sum_then_normalize",
	NormalizeThenSum: "normalize_then_sum",
	Hatchery:         "hatchery",
}

// Scale selects what SumThenNormalize divides by. The zero value is
// ScaleGroup, TRL's default.
type Scale uint8

const (
	// ScaleGroup divides by the std of the rollout's group ("group").
	ScaleGroup Scale = iota
	// ScaleBatch divides by the std of the whole batch ("batch").
	ScaleBatch
	// ScaleNone only subtracts the group mean ("none").
	ScaleNone
)

var scaleNames = [...]string{
	ScaleGroup: "group",
	ScaleBatch: "batch",
	ScaleNone:  "none",
}

// String returns the mode's configuration name, e.g. "normalize_then_sum".
func (m Mode) String() string { return enumString(m, modeNames[:], "mode") }

// ModeNames returns the modes' configuration names, in order.
func ModeNames() []string { return slices.Clone(modeNames[:]) }

// ScaleNames returns the scales' configuration names, in order.
func ScaleNames() []string { return slices.Clone(scaleNames[:]) }

// ParseMode returns the mode with the given configuration name. The empty
// string is SumThenNormalize (TRL's default), so an unset field means the
// default.
func ParseMode(s string) (Mode, error) { return parseEnum[Mode](s, modeNames[:], "mode") }

// MarshalText implements encoding.TextMarshaler.
func (m Mode) MarshalText() ([]byte, error) { return marshalEnum(m, modeNames[:], "mode") }

// UnmarshalText implements encoding.TextUnmarshaler with ParseMode, so a
// Mode can sit directly in a decoded configuration struct.
func (m *Mode) UnmarshalText(b []byte) error { return unmarshalEnum(m, b, modeNames[:], "mode") }

// String returns the scale's configuration name, e.g. "batch".
func (s Scale) String() string { return enumString(s, scaleNames[:], "scale") }

// ParseScale returns the scale with the given configuration name. The empty
// string is ScaleGroup (TRL's default).
func ParseScale(s string) (Scale, error) { return parseEnum[Scale](s, scaleNames[:], "scale") }

// MarshalText implements encoding.TextMarshaler.
func (s Scale) MarshalText() ([]byte, error) { return marshalEnum(s, scaleNames[:], "scale") }

// UnmarshalText implements encoding.TextUnmarshaler with ParseScale.
func (s *Scale) UnmarshalText(b []byte) error { return unmarshalEnum(s, b, scaleNames[:], "scale") }

// enumString returns the name of v in names, or what(v) for a value that
// has none.
func enumString[E ~uint8](v E, names []string, what string) string {
	if int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", what, uint8(v))
}

// parseEnum returns the value named s in names; the empty string is the
// zero value, the default. An unknown name is an error listing the valid
// ones.
func parseEnum[E ~uint8](s string, names []string, what string) (E, error) {
	if s == "" {
		return 0, nil
	}
	if i := slices.Index(names, s); i >= 0 {
		return E(i), nil
	}
	return 0, fmt.Errorf("unknown aggregation %s %q (valid: %s)", what, s, strings.Join(names, ", "))
}

// unmarshalEnum sets *dst to the value named b in names, as parseEnum
// reads it, and leaves it as it is on an error.
func unmarshalEnum[E ~uint8](dst *E, b []byte, names []string, what string) error {
	v, err := parseEnum[E](string(b), names, what)
	if err == nil {
		*dst = v
	}
	return err
}

// marshalEnum returns the name of v in names, and an error for a value
// that has none.
func marshalEnum[E ~uint8](v E, names []string, what string) ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("invalid aggregation %s %d", what, uint8(v))
	}
	return []byte(names[v]), nil
}

// Spec says how to aggregate. The zero value is TRL's default: GRPO with
// per-group scaling and every weight 1.
type Spec struct {
	Mode  Mode
	Scale Scale
	// Weights holds one finite weight per function, in the order of the
	// scores passed to Compute; nil means every weight is 1. Negative and
	// zero weights are allowed, as in TRL.
	Weights []float64
}

// Validate reports whether the spec is usable on its own, without the
// scores: a known mode and scale, a scale the mode honours, finite weights,
// and no weight other than 1 in Hatchery mode. The number of weights is
// checked by Compute. Configuration loaders can call it to fail at start.
func (s Spec) Validate() error {
	if int(s.Mode) >= len(modeNames) {
		return fmt.Errorf("invalid aggregation mode %d", uint8(s.Mode))
	}
	if int(s.Scale) >= len(scaleNames) {
		return fmt.Errorf("invalid aggregation scale %d", uint8(s.Scale))
	}
	if s.Mode != SumThenNormalize && s.Scale != ScaleGroup {
		return fmt.Errorf("aggregation scale %q does not apply to mode %q: it always normalizes per group (only %q is accepted)",
			s.Scale, s.Mode, ScaleGroup)
	}
	for k, w := range s.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("weight %d is %v: weights must be finite", k, w)
		}
		if s.Mode == Hatchery && w != 1 {
			return fmt.Errorf("weight %d is %v: mode %q sums functions unweighted, as Axolotl's Hatchery trainer does", k, w, Hatchery)
		}
	}
	return nil
}

// Result holds the aggregate numbers, aligned with the rollouts.
type Result struct {
	// Rewards is the weighted sum of each rollout's non-NaN scores (TRL's
	// nansum; unweighted in Hatchery mode); 0 for an unscorable rollout.
	Rewards []float64
	// Advantages is what the trainer multiplies into the policy gradient.
	// Always finite; 0 for an unscorable rollout.
	Advantages []float64
	// Unscorable counts the rollouts for which every function is NaN.
	Unscorable int
}

var errNoFunctions = errors.New("no functions to aggregate")

// Compute aggregates scores[k][i] (function k on rollout i; NaN when the
// function gave no score) over the groups named by groups[i]. Every
// scores[k] must have len(groups) entries. See the package documentation for
// the formulas and the treatment of NaN, single-rollout groups, empty group
// ids and unscorable rollouts.
//
// Every error Compute returns describes bad input: an invalid spec, a
// weights or scores shape that does not match, an infinite score, or
// magnitudes so large that the arithmetic overflows float64.
func Compute(spec Spec, groups []string, scores [][]float64) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if len(scores) == 0 {
		return Result{}, errNoFunctions
	}
	if len(spec.Weights) != 0 && len(spec.Weights) != len(scores) {
		return Result{}, fmt.Errorf("%d weights for %d functions", len(spec.Weights), len(scores))
	}
	n := len(groups)
	for k, col := range scores {
		if len(col) != n {
			return Result{}, fmt.Errorf("function %d has %d scores for %d rollouts", k, len(col), n)
		}
		for i, v := range col {
			if math.IsInf(v, 0) {
				return Result{}, fmt.Errorf("function %d, rollout %d: score is %v; scores must be finite, or NaN for no score", k, i, v)
			}
		}
	}

	a := aggregator{spec: spec, scores: scores}
	a.gi, a.sizes = indexGroups(groups)
	res := Result{Rewards: make([]float64, n), Advantages: make([]float64, n)}
	scorable := a.rewards(res.Rewards)

	var ok bool
	switch spec.Mode {
	case SumThenNormalize:
		ok = a.sumThenNormalize(res.Rewards, res.Advantages)
	case NormalizeThenSum:
		ok = a.normalizeThenSum(res.Advantages)
	case Hatchery:
		ok = a.hatchery(res.Rewards, res.Advantages)
	}
	if !ok {
		return Result{}, errOverflow
	}
	for i := range n {
		if !scorable[i] {
			res.Unscorable++
			res.Advantages[i] = 0
			continue
		}
		if !finite(res.Rewards[i]) || !finite(res.Advantages[i]) {
			return Result{}, errOverflow
		}
	}
	return res, nil
}

var errOverflow = errors.New("aggregation overflowed float64: scores times weights are too large in magnitude")

// aggregator holds one Compute call's inputs and group index.
type aggregator struct {
	spec   Spec
	scores [][]float64
	gi     []int // gi[i] is rollout i's group index
	sizes  []int // sizes[g] is the number of rollouts in group g
}

func (a *aggregator) weight(k int) float64 {
	if a.spec.Weights == nil {
		return 1
	}
	return a.spec.Weights[k]
}

// rewards fills r with each rollout's weighted nansum and reports which
// rollouts have at least one score.
func (a *aggregator) rewards(r []float64) (scorable []bool) {
	scorable = make([]bool, len(r))
	for k, col := range a.scores {
		w := a.weight(k)
		for i, v := range col {
			if !math.IsNaN(v) {
				r[i] += w * v
				scorable[i] = true
			}
		}
	}
	return scorable
}

// sumThenNormalize is TRL's sum_then_normalize branch.
func (a *aggregator) sumThenNormalize(r, adv []float64) bool {
	mean := a.groupMeans(r)
	for i, v := range r {
		adv[i] = v - mean[a.gi[i]]
	}
	switch a.spec.Scale {
	case ScaleGroup:
		ss := a.groupSquares(r, mean)
		for g, s := range ss {
			if a.sizes[g] > 1 {
				ss[g] = math.Sqrt(s / float64(a.sizes[g]-1))
			} else {
				ss[g] = 0 // TRL: std := 0 when num_generations == 1
			}
			if !finite(ss[g]) {
				return false
			}
		}
		for i := range adv {
			adv[i] /= ss[a.gi[i]] + Epsilon
		}
	case ScaleBatch:
		_, std := batchMeanStd(r)
		if !finite(std) {
			return false
		}
		for i := range adv {
			adv[i] /= std + Epsilon
		}
	case ScaleNone:
	}
	return true
}

// normalizeThenSum is TRL's normalize_then_sum branch (GDPO).
func (a *aggregator) normalizeThenSum(adv []float64) bool {
	ng := len(a.sizes)
	cnt := make([]int, ng)
	mean := make([]float64, ng)
	std := make([]float64, ng)
	sum := adv // the weighted sum of normalized scores, normalized in place below
	for k, col := range a.scores {
		clear(cnt)
		clear(mean)
		clear(std)
		for i, v := range col {
			if !math.IsNaN(v) {
				g := a.gi[i]
				cnt[g]++
				mean[g] += v
			}
		}
		for g := range mean {
			mean[g] /= float64(cnt[g]) // NaN when the group has no score: never read
		}
		for i, v := range col {
			if !math.IsNaN(v) {
				g := a.gi[i]
				d := v - mean[g]
				std[g] += d * d
			}
		}
		for g, s := range std {
			if cnt[g] > 1 {
				std[g] = math.Sqrt(s / float64(cnt[g]-1))
				if !finite(std[g]) {
					return false
				}
			} else {
				std[g] = math.NaN() // TRL's nanstd: NaN below two values
			}
		}
		w := a.weight(k)
		for i, v := range col {
			g := a.gi[i]
			if !math.IsNaN(v) && !math.IsNaN(std[g]) {
				sum[i] += w * ((v - mean[g]) / (std[g] + Epsilon))
			}
		}
	}
	m, s := batchMeanStd(sum)
	if !finite(s) {
		return false
	}
	for i, v := range sum {
		adv[i] = (v - m) / (s + Epsilon)
	}
	return true
}

// hatchery is Axolotl's HatcheryRLTrainer._compute_advantages.
func (a *aggregator) hatchery(r, adv []float64) bool {
	mean := a.groupMeans(r)
	std := a.groupSquares(r, mean)
	for g, s := range std {
		v := s / float64(a.sizes[g])
		if !finite(v) {
			return false
		}
		if v > hatcheryMinVariance {
			std[g] = math.Sqrt(v)
		} else {
			std[g] = 1
		}
	}
	for i, v := range r {
		g := a.gi[i]
		adv[i] = (v - mean[g]) / std[g]
	}
	return true
}

// groupMeans returns the mean of r over each group.
func (a *aggregator) groupMeans(r []float64) []float64 {
	mean := make([]float64, len(a.sizes))
	for i, v := range r {
		mean[a.gi[i]] += v
	}
	for g := range mean {
		mean[g] /= float64(a.sizes[g])
	}
	return mean
}

// groupSquares returns, per group, the sum of squared deviations of r from
// the group's mean.
func (a *aggregator) groupSquares(r, mean []float64) []float64 {
	ss := make([]float64, len(a.sizes))
	for i, v := range r {
		g := a.gi[i]
		d := v - mean[g]
		ss[g] += d * d
	}
	return ss
}

// batchMeanStd returns the mean and sample std of x, with std 0 for fewer
// than two values (TRL: "if rewards.numel() > 1 else zeros").
func batchMeanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return 0, 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		d := v - mean
		std += d * d
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}

// indexGroups numbers the groups in order of first appearance. An empty id
// is a group of its own. Consecutive equal ids (the usual layout) skip the
// map.
func indexGroups(groups []string) (gi, sizes []int) {
	gi = make([]int, len(groups))
	ids := make(map[string]int)
	prev, prevG := "", -1
	for i, id := range groups {
		var g int
		switch {
		case id == "":
			g = len(sizes)
			sizes = append(sizes, 0)
		case prevG >= 0 && id == prev:
			g = prevG
		default:
			var seen bool
			if g, seen = ids[id]; !seen {
				g = len(sizes)
				ids[id] = g
				sizes = append(sizes, 0)
			}
			prev, prevG = id, g
		}
		gi[i] = g
		sizes[g]++
	}
	return gi, sizes
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
