// Package wait is how tests wait for what happens asynchronously: a
// condition checked until it holds, failing with the last reason it gave.
// It starts nothing, so pure packages use it without pulling in a control
// plane (hack/race-packages.sh keeps a package under the race detector
// only while its tests import neither internal/testenv nor providertest).
package wait

import (
	"testing"
	"time"
)

// Patience is how long a test waits for the provider to act on a change:
// many of its 2 s polls, so a loaded CI machine does not fail a test whose
// provider is merely slow.
const Patience = 60 * time.Second

// Eventually calls fn until it returns nil; if timeout passes first it fails
// the test with fn's last error, which says why it did not hold yet.
func Eventually(t testing.TB, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	if err := Until(timeout, fn); err != nil {
		t.Fatalf("timed out after %s waiting for %s: %v", timeout, what, err)
	}
}

// Until calls fn until it returns nil, or timeout passes and it returns
// fn's last error: Eventually for code that reports errors instead of
// failing a test.
func Until(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval(timeout))
	}
}

// interval checks often enough that a test waits little past the moment
// fn holds (a fraction of its timeout: a short timeout is an in-process
// wait), and rarely enough that a slow fn (an API call to a real cluster, a
// kubectl run) over a long timeout does not load the machine.
func interval(timeout time.Duration) time.Duration {
	return min(max(timeout/600, 5*time.Millisecond), time.Second)
}

// NextSecond returns once the clock has entered the next whole second. The
// API server keeps creation timestamps to the second, and claims are
// ordered by them: an object made after NextSecond is younger than every
// object made before it.
func NextSecond() { time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) }
