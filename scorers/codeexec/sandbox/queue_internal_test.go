package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitFor starts take for a job of program and returns where its slot (or
// error) arrives, once the job is waiting.
func waitFor(t *testing.T, ctx context.Context, q *slotQueue, program string) <-chan error {
	t.Helper()
	q.mu.Lock()
	before := len(q.waiting)
	q.mu.Unlock()
	got := make(chan error, 1)
	go func() {
		s, err := q.take(ctx, nil, program)
		if err == nil && s == nil {
			err = errors.New("no slot and no error")
		}
		got <- err
	}()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		n := len(q.waiting)
		q.mu.Unlock()
		if n > before {
			return got
		}
		if time.Now().After(end) {
			t.Fatalf("the job of %s never waited", program)
		}
	}
}

// served says whether the job whose answer arrives on got has its slot.
func served(got <-chan error) bool {
	select {
	case err := <-got:
		return err == nil
	case <-time.After(50 * time.Millisecond):
		return false
	}
}

// TestSlotQueueOrder: a slot goes to the job whose program has held slots
// the least (less how long it waited), and among programs that held none,
// in the order the jobs came; a job that stops waiting leaves the queue.
func TestSlotQueueOrder(t *testing.T) {
	ctx := context.Background()
	q := newSlotQueue()
	one := &slot{id: 0}
	q.add(one)

	s, err := q.take(ctx, nil, "slow")
	if err != nil || s != one {
		t.Fatalf("take from an idle queue: %v, %v", s, err)
	}
	slowNext := waitFor(t, ctx, q, "slow")
	cheap := waitFor(t, ctx, q, "cheap")
	// The slow program held its slot for a minute: its next test waits
	// for the cheap program, which came later.
	q.put(one, "slow", time.Minute)
	if !served(cheap) {
		t.Fatal("the slot did not go to the program that had held none")
	}
	if served(slowNext) {
		t.Fatal("the slow program's next job got a slot that was in use")
	}
	q.put(one, "cheap", time.Millisecond)
	if !served(slowNext) {
		t.Fatal("the slow program's next job never got the slot")
	}

	// Programs that held none: first come, first served.
	first := waitFor(t, ctx, q, "a")
	second := waitFor(t, ctx, q, "b")
	gone, cancel := context.WithCancel(ctx)
	third := waitFor(t, gone, q, "c")
	cancel()
	if err := <-third; !errors.Is(err, context.Canceled) {
		t.Fatalf("a job whose context ended: %v, want its context's error", err)
	}
	q.put(one, "slow", time.Minute)
	if !served(first) || served(second) {
		t.Fatal("the slot did not go to the job that came first")
	}
	q.put(one, "a", 0)
	if !served(second) {
		t.Fatal("the second job never got the slot")
	}
	q.put(one, "b", 0)

	// Every program has left: none is remembered, and the slot is idle.
	if n := len(q.programs); n != 0 {
		t.Errorf("%d programs remembered with no job waiting or running", n)
	}
	if got := q.drain(1); len(got) != 1 || got[0] != one {
		t.Errorf("drain: %v, want the one slot", got)
	}
}
