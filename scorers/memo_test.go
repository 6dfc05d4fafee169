package scorers_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rewardd/rewardd/scorers"
)

// TestMemo: under one memo a key is computed once, however many calls ask
// for it at once; errors are not kept; without a memo every call computes.
func TestMemo(t *testing.T) {
	ctx := scorers.WithMemo(context.Background())
	var calls atomic.Int32
	release := make(chan struct{})
	slow := func() (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() {
			v, err := scorers.Memo(ctx, "k", slow)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	time.Sleep(50 * time.Millisecond) // let them all ask
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("8 concurrent calls computed %d times, want 1", n)
	}
	for i, v := range got {
		if v != 42 {
			t.Errorf("call %d got %d", i, v)
		}
	}
	if v, _ := scorers.Memo(ctx, "k", slow); v != 42 || calls.Load() != 1 {
		t.Errorf("a later call: %d after %d computations, want 42 after 1", v, calls.Load())
	}

	boom := errors.New("boom")
	fails := 0
	fail := func() (int, error) { fails++; return 0, boom }
	for range 2 {
		if _, err := scorers.Memo(ctx, "bad", fail); !errors.Is(err, boom) {
			t.Errorf("error %v, want boom", err)
		}
	}
	if fails != 2 {
		t.Errorf("an error was kept: %d computations, want 2", fails)
	}

	if _, err := scorers.Memo(ctx, "k", func() (string, error) { return "", nil }); err == nil {
		t.Errorf("a key asked for as another type: no error")
	}

	plain := context.Background()
	n := 0
	for range 3 {
		scorers.Memo(plain, "k", func() (int, error) { n++; return n, nil })
	}
	if n != 3 {
		t.Errorf("without a memo: %d computations, want 3", n)
	}
}

// TestMemoPanic: a computation that panics leaves no caller waiting
// forever; the next call computes again.
func TestMemoPanic(t *testing.T) {
	ctx := scorers.WithMemo(context.Background())
	func() {
		defer func() { recover() }()
		scorers.Memo(ctx, "p", func() (int, error) { panic("no") })
	}()
	done := make(chan int)
	go func() {
		v, _ := scorers.Memo(ctx, "p", func() (int, error) { return 7, nil })
		done <- v
	}()
	select {
	case v := <-done:
		if v != 7 {
			t.Errorf("got %d, want 7", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call after a panic waits forever")
	}
}

// TestMemoCancel: a call waiting for another's computation gives up when
// its context ends.
func TestMemoCancel(t *testing.T) {
	ctx := scorers.WithMemo(context.Background())
	release := make(chan struct{})
	go scorers.Memo(ctx, "k", func() (int, error) { <-release; return 1, nil })
	time.Sleep(20 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := scorers.Memo(short, "k", func() (int, error) { return 2, nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting call: %v, want DeadlineExceeded", err)
	}
	close(release)
}
