package wait

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// failing records a failure instead of ending the test, as testing.T would.
type failing struct {
	testing.TB
	msg string
}

func (f *failing) Helper() {}

func (f *failing) Fatalf(format string, args ...any) {
	f.msg = format
	for _, a := range args {
		if err, ok := a.(error); ok {
			f.msg += " " + err.Error()
		}
	}
	panic(f)
}

func run(fn func(tb testing.TB)) (msg string) {
	f := &failing{}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		msg = f.msg
	}()
	fn(f)
	return ""
}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	msg := run(func(tb testing.TB) {
		Eventually(tb, time.Minute, "the third call", func() error {
			if calls++; calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
	})
	if msg != "" || calls != 3 {
		t.Errorf("failed with %q after %d calls, want success on the third", msg, calls)
	}
}

func TestEventuallyFailsWithTheLastReason(t *testing.T) {
	calls := 0
	msg := run(func(tb testing.TB) {
		Eventually(tb, 250*time.Millisecond, "never", func() error {
			calls++
			return errors.New("reason " + strings.Repeat("!", calls))
		})
	})
	if !strings.Contains(msg, "reason "+strings.Repeat("!", calls)) || calls < 2 {
		t.Errorf("failure %q after %d calls, want the last call's reason", msg, calls)
	}
}

func TestIntervalGrowsWithTheTimeoutWithinBounds(t *testing.T) {
	for timeout, want := range map[time.Duration]time.Duration{
		time.Millisecond: 5 * time.Millisecond,
		5 * time.Second:  5 * time.Second / 600,
		time.Second:      5 * time.Millisecond,
		Patience:         100 * time.Millisecond,
		3 * time.Minute:  300 * time.Millisecond,
		30 * time.Minute: time.Second,
	} {
		if got := interval(timeout); got != want {
			t.Errorf("interval(%s) = %s, want %s", timeout, got, want)
		}
	}
}

func TestUntilReturnsTheLastError(t *testing.T) {
	calls := 0
	err := Until(20*time.Millisecond, func() error {
		calls++
		return errors.New(strings.Repeat("!", calls))
	})
	if err == nil || err.Error() != strings.Repeat("!", calls) {
		t.Errorf("Until returned %v after %d calls, want the last call's error", err, calls)
	}
	if err := Until(time.Second, func() error { return nil }); err != nil {
		t.Errorf("Until returned %v for a condition that holds", err)
	}
}
