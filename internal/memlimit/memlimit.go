// Package memlimit sets the Go runtime's soft memory limit from the
// container's memory limit, and the collector's target.
//
// The Go runtime does not read the cgroup's memory limit: left alone, it
// lets the heap grow to twice what is live before collecting, and a large
// change (a thousand Ingresses at once) takes the process past a 256 MiB
// container limit into an OOM kill while its live heap is a third of that.
// A soft limit makes the collector work harder as the process nears it.
package memlimit

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fraction of the container's memory limit the soft limit is set to: the
// rest is for what the runtime does not count (thread stacks the OS has
// not given back, memory being returned).
const Fraction = 0.9

// cgroupFiles hold a container's memory limit: cgroup v2, then v1.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// Container is the memory limit of the container the process runs in, in
// bytes, read from read(file) for each of the cgroup files; 0 when there is
// none (no cgroup, "max", or v1's "unlimited" of nearly 2^63).
func Container(read func(string) ([]byte, error)) int64 {
	for _, f := range cgroupFiles {
		b, err := read(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0
		}
		return n
	}
	return 0
}

// Decide is the soft limit to set, in bytes, and whether to set one:
// explicit (bytes, from --memory-limit; negative means not given) wins,
// then GOMEMLIMIT (the runtime has read it already: nothing to do), then
// Fraction of the container's limit.
func Decide(explicit int64, gomemlimitSet bool, container int64) (int64, bool) {
	switch {
	case explicit >= 0:
		return explicit, explicit > 0
	case gomemlimitSet:
		return 0, false
	case container > 0:
		return int64(float64(container) * Fraction), true
	}
	return 0, false
}

// Apply sets the soft limit Decide chooses and returns it (0: none set).
func Apply(explicit int64) int64 {
	_, set := os.LookupEnv("GOMEMLIMIT")
	limit, ok := Decide(explicit, set, Container(os.ReadFile))
	if !ok {
		return 0
	}
	debug.SetMemoryLimit(limit)
	return limit
}

// DefaultGCPercent is the collector's target (GOGC) unless GOGC is set:
// the heap may grow by half of what is live (and of the goroutines' stacks)
// before the next collection, not by all of it as Go's default lets it.
// The provider's live heap is mostly its caches, so the headroom was most
// of what it added above them: at 1,000 Ingresses a live heap of about
// 55 MiB had a target of 120 MiB at Go's 100 and still 100 MiB at 75, and
// the process peaked above 200 MiB at both (docs/benchmarks.md, stop 34).
// The collector runs twice as often as at 100; it was a quarter of the
// provider's steady CPU, which the quiet status comparison and the lazy
// logger cut by about as much.
const DefaultGCPercent = 50

// GCPercent is the collector's target to set, and whether to set one:
// DefaultGCPercent unless GOGC is set (the runtime has read it already).
func GCPercent(gogcSet bool) (int, bool) {
	if gogcSet {
		return 0, false
	}
	return DefaultGCPercent, true
}

// ApplyGCPercent sets the target GCPercent chooses and returns it (0: GOGC
// is set and the runtime follows it).
func ApplyGCPercent() int {
	_, set := os.LookupEnv("GOGC")
	p, ok := GCPercent(set)
	if !ok {
		return 0
	}
	debug.SetGCPercent(p)
	return p
}
