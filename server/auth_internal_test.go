package server

import (
	"testing"
	"time"
)

// TestAuthFailuresWait: the first request without the token from an address
// is answered at once, the next ones wait 10 ms more each, up to a second,
// whichever port of the address they come from; another address starts
// afresh.
func TestAuthFailuresWait(t *testing.T) {
	a := NewAuth("s3cret")
	for i, want := range []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond} {
		if got := a.failed("10.0.0.1:" + string(rune('1'+i)) + "000"); got != want {
			t.Errorf("failure %d: wait %v, want %v", i+1, got, want)
		}
	}
	if got := a.failed("10.0.0.2:5000"); got != 0 {
		t.Errorf("another address: wait %v, want 0", got)
	}
	for range 200 {
		a.failed("10.0.0.1:1")
	}
	if got := a.failed("10.0.0.1:1"); got != maxFailDelay {
		t.Errorf("after 200 failures: wait %v, want %v", got, maxFailDelay)
	}
}
