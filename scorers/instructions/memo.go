package instructions

import "sync"

// memo remembers the answers of a slow pure function of a text (its
// language, its sentence count) for the last memoSize texts asked about,
// so that functions scoring the same completion (IFEval's strict and loose
// evaluations, served side by side) and the variants of one loose
// evaluation compute each once. Texts longer than memoMaxText are not
// remembered, so that it holds at most memoSize × memoMaxText bytes of
// text (16 MiB). It is safe for concurrent use.
type memo[V any] struct {
	mu    sync.Mutex
	m     map[string]V
	order []string // the keys of m, oldest first
}

const (
	memoSize    = 256
	memoMaxText = 64 << 10
)

func newMemo[V any]() *memo[V] { return &memo[V]{m: make(map[string]V, memoSize)} }

// get returns f(text), from memory when it is there. f runs outside the
// lock: two goroutines asking about a new text at once may both run it.
func (m *memo[V]) get(text string, f func(string) V) V {
	if len(text) > memoMaxText {
		return f(text)
	}
	m.mu.Lock()
	v, ok := m.m[text]
	m.mu.Unlock()
	if ok {
		return v
	}
	v = f(text)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.m[text]; !ok {
		if len(m.order) == memoSize {
			delete(m.m, m.order[0])
			m.order = append(m.order[:0], m.order[1:]...)
		}
		m.m[text] = v
		m.order = append(m.order, text)
	}
	return v
}

// memoize returns f remembering its last memoSize answers.
func memoize(f func(string) int) func(string) int {
	m := newMemo[int]()
	return func(text string) int { return m.get(text, f) }
}
