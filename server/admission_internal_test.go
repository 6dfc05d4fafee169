package server

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCallHoldsComeFromItsReceipt (issue 16, the `slow` load at 30 s: a
// valid gRPC call whose receipt was taken was then refused the 1.7 MB
// its message held, as slow HTTP bodies' chunks had taken the last free
// bytes meanwhile): the holds of a call expected small come first out of
// its receipt, so none is refused up to the receipt whatever the others
// took; beyond it the free room decides, and a refusal changes nothing;
// and everything goes back.
func TestCallHoldsComeFromItsReceipt(t *testing.T) {
	a := newAdmission(admissionLimits{maxInflight: 8, capacity: 64 << 20, message: 8 << 20}, newServiceMetrics(prometheus.NewRegistry()))
	call := a.ticket()
	call.expect = new(atomic.Int64)
	call.expect.Store(512 << 10) // a connection of small messages
	if err := call.takeReceipt(context.Background(), 8<<20, false); err != nil {
		t.Fatal(err)
	}
	var bodies []*ticket // slow bodies' first chunks, until nothing fits
	for {
		b := a.ticket()
		if err := b.reserve(256 << 10); err != nil {
			b.release()
			break
		}
		bodies = append(bodies, b)
	}
	if len(bodies) == 0 {
		t.Fatal("no body's chunk fit beside the receipt")
	}
	// The message, its copy and what decoding it makes: 7 MiB of the
	// receipt's 8.
	for _, n := range []int64{2 << 20, 2 << 20, 3 << 20} {
		if err := call.reserve(n); err != nil {
			t.Fatalf("a hold of %d bytes within the receipt: %v", n, err)
		}
	}
	// 1 MiB more than the receipt has left: the free room decides.
	var me *MemoryError
	if err := call.reserve(2 << 20); !errors.As(err, &me) {
		t.Errorf("a hold past the receipt with the budget full: %v, want a *MemoryError", err)
	}
	if left := call.receiptLeft(); call.bytes != 7<<20 || left.n != 1<<20 {
		t.Errorf("after the refusal the call holds %d bytes and a receipt of %d, want 7 MiB and 1 MiB", call.bytes, left.n)
	}
	call.giveReceipt()
	b := a.ticket() // the receipt's last MiB came back
	if err := b.reserve(256 << 10); err != nil {
		t.Errorf("a chunk once the receipt's rest came back: %v", err)
	}
	for _, b := range append(bodies, b, call) {
		b.release()
	}
	if a.held != 0 || a.promised != 0 {
		t.Errorf("after every release held %d, promised %d; want 0", a.held, a.promised)
	}
}

// TestWaitSlot: a request waiting for a slot gets the next one given back,
// oldest first; one whose wait ends leaves the queue and its bytes; one
// that would take the queue over its bytes is refused at once.
func TestWaitSlot(t *testing.T) {
	a := newAdmission(admissionLimits{maxInflight: 1, capacity: 64 << 20, message: 8 << 20}, newServiceMetrics(prometheus.NewRegistry()))
	if !a.takeSlot() {
		t.Fatal("the first slot is not free")
	}
	ctx := context.Background()
	got := make(chan int, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.waitSlot(ctx, 100, 250); err != nil {
				t.Error(err)
				return
			}
			got <- i
		}()
		for { // the first waiter queues before the second
			a.slotMu.Lock()
			n := len(a.slotQueue)
			a.slotMu.Unlock()
			if n == i+1 {
				break
			}
			runtime.Gosched()
		}
	}
	if err := a.waitSlot(ctx, 100, 250); !errors.Is(err, errQueueFull) {
		t.Errorf("a third waiter over queue bytes: %v, want errQueueFull", err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := a.waitSlot(short, 10, 250); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose context ends: %v", err)
	}
	a.giveSlot()
	if first := <-got; first != 0 {
		t.Errorf("waiter %d got the slot first, want 0", first)
	}
	a.giveSlot()
	<-got
	wg.Wait()
	a.giveSlot()
	if a.inflight.Load() != 0 || a.queuedBytes != 0 || len(a.slotQueue) != 0 {
		t.Errorf("after all: inflight %d, queued bytes %d, waiters %d; want 0", a.inflight.Load(), a.queuedBytes, len(a.slotQueue))
	}
}
