package auth

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestLimiterSlidingWindow(t *testing.T) {
	l := NewLimiter(3, time.Minute)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := l.Allow("a", t0.Add(time.Duration(i)*10*time.Second)); !ok {
			t.Fatalf("call %d refused", i+1)
		}
	}
	ok, retry := l.Allow("a", t0.Add(30*time.Second))
	if ok || retry != 30*time.Second {
		t.Errorf("4th call within the window: ok=%v retry=%v, want refused, 30s", ok, retry)
	}
	if ok, _ := l.Allow("b", t0.Add(30*time.Second)); !ok {
		t.Error("another identity must have its own window")
	}
	// The window slides: at t0+60s the first call has left it, not the others.
	if ok, _ := l.Allow("a", t0.Add(60*time.Second)); !ok {
		t.Error("a call the first call has made room for was refused")
	}
	if ok, retry := l.Allow("a", t0.Add(61*time.Second)); ok || retry != 9*time.Second {
		t.Errorf("at 61s: ok=%v retry=%v, want refused, 9s", ok, retry)
	}
	// A refused call is not recorded: it does not push the window out.
	if ok, _ := l.Allow("a", t0.Add(70*time.Second)); !ok {
		t.Error("refused calls must not count")
	}
}

func TestLimiterClockStepsBack(t *testing.T) {
	l := NewLimiter(1, time.Second)
	t0 := time.Unix(1000, 0)
	l.Allow("a", t0)
	if ok, retry := l.Allow("a", t0.Add(-time.Hour)); ok || retry > time.Second {
		t.Errorf("ok=%v retry=%v: a wait is at most one window", ok, retry)
	}
}

func TestLimiterZeroAllowsNothing(t *testing.T) {
	if ok, retry := NewLimiter(0, time.Minute).Allow("a", time.Now()); ok || retry != time.Minute {
		t.Errorf("ok=%v retry=%v", ok, retry)
	}
}

func TestLimiterBoundedMemory(t *testing.T) {
	l := NewLimiter(5, time.Minute)
	l.max = 100
	t0 := time.Unix(0, 0)
	for i := range 1000 {
		l.Allow(fmt.Sprint("id-", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if l.Len() > 100 {
		t.Errorf("tracking %d identities, cap 100", l.Len())
	}
	// Idle identities are forgotten after a window.
	l.Allow("late", t0.Add(2*time.Minute))
	if l.Len() != 1 {
		t.Errorf("after a window of idleness %d identities remain, want 1", l.Len())
	}
}

func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(60, time.Minute)
	now := time.Now()
	var mu sync.Mutex
	allowed := 0
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if ok, _ := l.Allow("x", now); ok {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if allowed != 60 {
		t.Errorf("allowed %d of 200 concurrent calls, want 60", allowed)
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	l := NewLimiter(60, time.Minute)
	now := time.Now()
	for i := 0; b.Loop(); i++ {
		l.Allow(fmt.Sprint(i%1000), now.Add(time.Duration(i)*time.Millisecond))
	}
}
