package budget

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestSendRecordTellsNeverSentFromSent(t *testing.T) {
	b := NewRegistry(Options{Limit: 1000, Window: time.Second}).For("token")
	var arrived arrivals
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { arrived.add() }))
	defer srv.Close()
	c := &http.Client{Transport: &Transport{Next: srv.Client().Transport, Budget: b}}

	ctx, sent := WithSendRecord(context.Background())
	if sent.NeverSent() {
		t.Error("a record no budget has seen says never sent")
	}
	if _, err := get(ctx, c, srv.URL+"/x"); err != nil {
		t.Fatal(err)
	}
	if !sent.Sent() || sent.NeverSent() {
		t.Error("a request the budget let go is not recorded as sent")
	}

	b.Pause(time.Minute)
	held, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	held, notSent := WithSendRecord(held)
	if _, err := get(held, c, srv.URL+"/x"); err == nil {
		t.Fatal("a request held by a paused budget past its context's end succeeded")
	}
	if notSent.Sent() || !notSent.NeverSent() {
		t.Error("a request that ended while it waited for the budget is recorded as sent")
	}
	if n := len(arrived.times()); n != 1 {
		t.Errorf("%d requests reached the server; want 1", n)
	}
	if (*SendRecord)(nil).Sent() || (*SendRecord)(nil).NeverSent() {
		t.Error("no record says sent")
	}
}
