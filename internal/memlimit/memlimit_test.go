package memlimit

import (
	"errors"
	"testing"
)

func TestContainer(t *testing.T) {
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(f string) ([]byte, error) {
			if v, ok := m[f]; ok {
				return []byte(v), nil
			}
			return nil, errors.New("no such file")
		}
	}
	cases := map[string]struct {
		files map[string]string
		want  int64
	}{
		"NoCgroup":        {want: 0},
		"V2Limit":         {files: map[string]string{"/sys/fs/cgroup/memory.max": "268435456\n"}, want: 268435456},
		"V2Unlimited":     {files: map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, want: 0},
		"V1Limit":         {files: map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n"}, want: 536870912},
		"V1Unlimited":     {files: map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, want: 0},
		"V2BeforeV1":      {files: map[string]string{"/sys/fs/cgroup/memory.max": "1000", "/sys/fs/cgroup/memory/memory.limit_in_bytes": "2000"}, want: 1000},
		"Garbage":         {files: map[string]string{"/sys/fs/cgroup/memory.max": "lots"}, want: 0},
		"NegativeIsNoOne": {files: map[string]string{"/sys/fs/cgroup/memory.max": "-1"}, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Container(files(tc.files)); got != tc.want {
				t.Errorf("Container() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	const mi = 1 << 20
	cases := map[string]struct {
		explicit  int64
		envSet    bool
		container int64
		want      int64
		wantSet   bool
	}{
		"NothingKnown":            {explicit: -1},
		"FromTheContainer":        {explicit: -1, container: 256 * mi, want: 241591910, wantSet: true},
		"GOMEMLIMITWins":          {explicit: -1, envSet: true, container: 256 * mi},
		"FlagWinsOverAll":         {explicit: 180 * mi, envSet: true, container: 256 * mi, want: 180 * mi, wantSet: true},
		"FlagZeroTurnsItOff":      {explicit: 0, container: 256 * mi},
		"NoContainerLimitNoLimit": {explicit: -1, container: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, set := Decide(tc.explicit, tc.envSet, tc.container)
			if got != tc.want || set != tc.wantSet {
				t.Errorf("Decide() = %d, %t; want %d, %t", got, set, tc.want, tc.wantSet)
			}
		})
	}
}

func TestGCPercent(t *testing.T) {
	cases := map[string]struct {
		reason  string
		gogcSet bool
		want    int
		wantSet bool
	}{
		"Default": {
			reason: "Without GOGC the provider's own target applies.",
			want:   DefaultGCPercent, wantSet: true,
		},
		"GOGCWins": {
			reason:  "GOGC, which the runtime has read already, is left alone (GOGC=off too).",
			gogcSet: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, set := GCPercent(tc.gogcSet)
			if got != tc.want || set != tc.wantSet {
				t.Errorf("%s\nGCPercent(%t) = %d, %t; want %d, %t", tc.reason, tc.gogcSet, got, set, tc.want, tc.wantSet)
			}
		})
	}
}
