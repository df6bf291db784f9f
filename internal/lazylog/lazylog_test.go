package lazylog

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
)

// line is one line a recording logger was asked to write.
type line struct {
	Level string
	Msg   string
	KV    []any
}

// recorder records lines and counts the WithValues calls made on it.
type recorder struct {
	lines      *[]line
	withValues *int
}

func (r recorder) Info(msg string, kv ...any) {
	*r.lines = append(*r.lines, line{Level: "info", Msg: msg, KV: kv})
}

func (r recorder) Debug(msg string, kv ...any) {
	*r.lines = append(*r.lines, line{Level: "debug", Msg: msg, KV: kv})
}

func (r recorder) WithValues(_ ...any) logging.Logger {
	*r.withValues++
	return r
}

func TestLazyLogger(t *testing.T) {
	cases := map[string]struct {
		reason string
		use    func(logging.Logger)
		want   []line
	}{
		"NoValues": {
			reason: "A line with no values kept is passed through as it is.",
			use:    func(l logging.Logger) { l.Info("hello", "k", "v") },
			want:   []line{{Level: "info", Msg: "hello", KV: []any{"k", "v"}}},
		},
		"ValuesFirst": {
			reason: "Values kept by WithValues come before the line's own, in the order they were added.",
			use: func(l logging.Logger) {
				l.WithValues("request", "a").WithValues("uid", "1").Debug("observed", "k", "v")
			},
			want: []line{{Level: "debug", Msg: "observed", KV: []any{"request", "a", "uid", "1", "k", "v"}}},
		},
		"BranchesDoNotShare": {
			reason: "Two loggers made from one keep their own values even when the parent's slice has spare capacity.",
			use: func(l logging.Logger) {
				// Appended one pair at a time, the parent's slice ends with
				// room for one more pair (length 6, capacity 8).
				parent := l.WithValues("request", "a").WithValues("uid", "1").WithValues("x", "y")
				parent = parent.WithValues() // no values: the same slice
				left := parent.WithValues("external-name", "left")
				right := parent.WithValues("external-name", "right")
				left.Info("l")
				right.Info("r")
			},
			want: []line{
				{Level: "info", Msg: "l", KV: []any{"request", "a", "uid", "1", "x", "y", "external-name", "left"}},
				{Level: "info", Msg: "r", KV: []any{"request", "a", "uid", "1", "x", "y", "external-name", "right"}},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var lines []line
			calls := 0
			tc.use(New(recorder{lines: &lines, withValues: &calls}))
			if diff := cmp.Diff(tc.want, lines); diff != "" {
				t.Errorf("%s\nlines: -want, +got:\n%s", tc.reason, diff)
			}
			if calls != 0 {
				t.Errorf("%s\nthe logger beneath was given WithValues %d times, want 0", tc.reason, calls)
			}
		})
	}
}
