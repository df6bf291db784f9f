// Package cloudflaretest makes the errors the Cloudflare client returns when
// a call fails, from real answers (an httptest server, a closed port, a
// spent deadline) rather than messages typed by hand, for the tests of how
// failures are classified.
package cloudflaretest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
)

// create is the call every failure is made by: creating a DNS record.
func create(ctx context.Context, endpoint string) error {
	c := cloudflare.New(clients.Config{Token: "token", AccountID: "account", Endpoint: endpoint + "/client/v4/"}, cloudflare.Options{})
	_, err := c.CreateDNSRecord(ctx, "zone", cloudflare.DNSRecord{Type: "CNAME", Name: "a.example.com", Content: "b.example.com"})
	return err
}

// Answered is the client's error for a call Cloudflare answers with status
// and, unless code is 0, an error envelope with code and message.
func Answered(t testing.TB, status, code int, message string) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		env := map[string]any{"success": false, "errors": []any{}, "messages": []any{}, "result": nil}
		if code != 0 {
			env["errors"] = []any{map[string]any{"code": code, "message": message}}
		}
		_ = json.NewEncoder(w).Encode(env)
	}))
	defer srv.Close()
	return failed(t, create(context.Background(), srv.URL))
}

// Unreachable is the client's error for a call to a port nothing listens
// on: connection refused.
func Unreachable(t testing.TB) error {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return failed(t, create(context.Background(), srv.URL))
}

// CutShort is the client's error for an answer the server cuts off in the
// middle of its body.
func CutShort(t testing.TB) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte(`{"success":true,`))
	}))
	defer srv.Close()
	return failed(t, create(context.Background(), srv.URL))
}

// DeadlineSpent is the client's error for a call whose context's deadline
// passed first, as a reconcile's does while it queues for the request
// budget.
func DeadlineSpent(t testing.TB) error {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	return failed(t, create(ctx, srv.URL))
}

func failed(t testing.TB, err error) error {
	t.Helper()
	if err == nil {
		t.Fatal("the call succeeded; want it to fail")
	}
	return err
}

// Reset is the client's error for a call whose connection the server
// resets (an RST) once it has read the request.
func Reset(t testing.TB) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
		_ = conn.Close()
	}))
	defer srv.Close()
	return failed(t, create(context.Background(), srv.URL))
}
