package cloudflaretunnel

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestConfigBatcher(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	b := &configBatcher{now: func() time.Time { return now }}
	const window = 5 * time.Second
	steps := []struct {
		name    string
		advance time.Duration
		uid     types.UID
		want    time.Duration
	}{
		{name: "FirstChangeGoesOut", uid: "a", want: 0},
		{name: "ChangeRightAfterIsHeldForTheWholeWindow", uid: "a", want: window},
		{name: "LaterInTheWindowIsHeldForTheRest", advance: 2 * time.Second, uid: "a", want: 3 * time.Second},
		{name: "AnotherTunnelIsIndependent", uid: "b", want: 0},
		{name: "AfterTheWindowGoesOut", advance: 3 * time.Second, uid: "a", want: 0},
		{name: "AndStartsANewWindow", advance: time.Second, uid: "a", want: 4 * time.Second},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if got := b.hold(s.uid, window); got != s.want {
			t.Errorf("%s: hold = %v, want %v", s.name, got, s.want)
		}
	}
	b.forget("a")
	if got := b.hold("a", window); got != 0 {
		t.Errorf("after forget: hold = %v, want 0", got)
	}
}

func TestConfigBatcherCountsEachHeldWriteOnce(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	b := &configBatcher{now: func() time.Time { return now }}
	const window = 5 * time.Second
	b.hold("a", window) // written
	var first []bool
	for range 3 { // three reconciles while the change waits
		if b.hold("a", window) > 0 {
			first = append(first, b.newlyHeld("a"))
		}
		now = now.Add(time.Second)
	}
	now = now.Add(window)
	if got := b.hold("a", window); got != 0 {
		t.Fatalf("after the window: hold = %v, want 0 (written)", got)
	}
	if b.hold("a", window) > 0 {
		first = append(first, b.newlyHeld("a")) // a new change after that write
	}
	if want := []bool{true, false, false, true}; !slices.Equal(first, want) {
		t.Errorf("newlyHeld = %v, want %v: one per write held back, however many reconciles", first, want)
	}
}
