package regex

import (
	"fmt"
	"testing"
)

func TestCacheBounded(t *testing.T) {
	builds := 0
	c := newCache(8, func(pat string) (*matcher, error) {
		builds++
		return &matcher{}, nil
	})
	hot := "hot"
	for i := range 100 {
		if _, err := c.get(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.get(hot); err != nil {
			t.Fatal(err)
		}
		if n := len(c.cur) + len(c.old); n > 2*c.size {
			t.Fatalf("after %d patterns the cache holds %d entries, want at most %d", i+1, n, 2*c.size)
		}
	}
	// The hot pattern was built once: used at every step, it always survived.
	if want := 100 + 1; builds != want {
		t.Errorf("%d builds, want %d", builds, want)
	}
}

func TestCacheKeepsErrors(t *testing.T) {
	builds := 0
	c := newCache(8, func(pat string) (*matcher, error) {
		builds++
		return nil, fmt.Errorf("bad %q", pat)
	})
	for range 3 {
		if _, err := c.get("("); err == nil {
			t.Fatal("no error")
		}
	}
	if builds != 1 {
		t.Errorf("%d builds of a bad pattern, want 1", builds)
	}
}
