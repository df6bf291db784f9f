package e2e

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// simLog tells which installation sent a request to the simulator. Two
// clusters share the account and its token, so nothing in a request tells
// them apart; each cluster's provider is given a listener of its own, and
// the listener's label is the sender.
type simLog struct {
	mu       sync.Mutex
	requests map[string]int // per sender, every method
	writes   []simWrite
}

// simWrite is one write the simulator served: its sender, method, path
// and, for a create, the ID of the object it answered with.
type simWrite struct {
	Who, Method, Path, Created string
}

func newSimLog() *simLog { return &simLog{requests: map[string]int{}} }

// serve passes every request to next, recording it as sent by who.
func (l *simLog) serve(who string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			l.count(who)
			next.ServeHTTP(w, r)
			return
		}
		tee := &teeWriter{ResponseWriter: w}
		next.ServeHTTP(tee, r)
		l.record(simWrite{Who: who, Method: r.Method, Path: r.URL.Path, Created: createdID(r.Method, tee.body.Bytes())})
	})
}

func (l *simLog) count(who string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests[who]++
}

func (l *simLog) record(w simWrite) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests[w.Who]++
	l.writes = append(l.writes, w)
}

// Requests is how many requests who has sent so far.
func (l *simLog) Requests(who string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests[who]
}

// Written is every object ID who wrote: named in a write's path or
// answered to its create.
func (l *simLog) Written(who string) map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := map[string]bool{}
	for _, w := range l.writes {
		if w.Who != who {
			continue
		}
		for _, seg := range strings.Split(w.Path, "/") {
			if objectID.MatchString(seg) {
				ids[seg] = true
			}
		}
		if w.Created != "" {
			ids[w.Created] = true
		}
	}
	return ids
}

// Writes are who's writes whose path contains part.
func (l *simLog) Writes(who, part string) []simWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(l.writes), func(w simWrite) bool { return w.Who != who || !strings.Contains(w.Path, part) })
}

// objectID is a Cloudflare ID in a path: 32 hex digits or a UUID.
var objectID = regexp.MustCompile(`^([0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)

// createdID is the ID a successful POST answered with, from Cloudflare's
// envelope.
func createdID(method string, body []byte) string {
	if method != http.MethodPost {
		return ""
	}
	var env struct {
		Success bool `json:"success"`
		Result  struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &env) != nil || !env.Success {
		return ""
	}
	return env.Result.ID
}

// teeWriter keeps a copy of the response body.
type teeWriter struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// simListener serves h's simulator on a new loopback listener whose
// requests the log records as sent by who, until the test ends; it
// returns the API's URL there.
func (h *harness) simListener(t *testing.T, who string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.simLog.serve(who, h.sim)}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/client/v4/"
}
