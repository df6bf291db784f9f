package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim/contract"
)

const zoneName = "example.com"

// checkedCall is call through the OpenAPI contract checker: the batch
// endpoint's requests and responses must match Cloudflare's document.
func checkedCall(t *testing.T, srv *httptest.Server, method, path, body string) reply {
	t.Helper()
	hc := &http.Client{Transport: contract.NewTransport(t, http.DefaultTransport)}
	req, err := http.NewRequest(method, srv.URL+"/client/v4"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the reply: %v", method, path, err)
	}
	var e envelopeReply
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s %s: not an envelope: %s", method, path, b)
	}
	return reply{Status: res.StatusCode, Body: e, Header: res.Header}
}

func cname(name string) string {
	return fmt.Sprintf(`{"name":%q,"type":"CNAME","content":"t.cfargotunnel.com","proxied":true,"ttl":1,"comment":"c-%s"}`, name, name)
}

// names lists the zone's record names, sorted.
func names(s *Server) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, r := range s.records {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return out
}

func TestDNSBatch(t *testing.T) {
	records := "/zones/" + ZoneID(zoneName) + "/dns_records"
	seed := func(t *testing.T, s *Server, srv *httptest.Server, name string) string {
		r := checkedCall(t, srv, "POST", records, cname(name))
		var rec struct{ ID string }
		if r.Status != 200 || json.Unmarshal(r.Body.Result, &rec) != nil {
			t.Fatalf("seeding %s: %d %v", name, r.Status, codes(r))
		}
		return rec.ID
	}
	cases := map[string]struct {
		limit      int
		body       func(ids map[string]string) string
		wantStatus int
		wantCodes  []int
		wantNames  []string
		wantPosts  []string
	}{
		"AppliesDeletesThenPatchesPutsAndPosts": {
			body: func(ids map[string]string) string {
				// The post reuses the deleted record's name: it succeeds only
				// because deletes run first.
				return fmt.Sprintf(`{"deletes":[{"id":%q}],"patches":[{"id":%q,"name":"keep","type":"CNAME","content":"t.cfargotunnel.com","ttl":1,"comment":"patched"}],"puts":[{"id":%q,"name":"put","type":"CNAME","content":"t.cfargotunnel.com","proxied":true,"ttl":1}],"posts":[%s,%s]}`,
					ids["old"], ids["keep"], ids["other"], cname("old"), cname("new"))
			},
			wantStatus: 200,
			wantNames:  []string{"keep.example.com", "new.example.com", "old.example.com", "put.example.com"},
			wantPosts:  []string{"old.example.com", "new.example.com"},
		},
		"OneBadRecordFailsTheWholeBatch": {
			body: func(ids map[string]string) string {
				return fmt.Sprintf(`{"deletes":[{"id":%q}],"posts":[%s,%s]}`, ids["old"], cname("new"), cname("keep"))
			},
			wantStatus: 400, wantCodes: []int{81057},
			wantNames: []string{"keep.example.com", "old.example.com", "other.example.com"},
		},
		"AMissingRecordFailsTheWholeBatch": {
			body: func(ids map[string]string) string {
				return fmt.Sprintf(`{"deletes":[{"id":%q},{"id":"00000000000000000000000000000000"}],"posts":[%s]}`, ids["old"], cname("new"))
			},
			wantStatus: 404, wantCodes: []int{81044},
			wantNames: []string{"keep.example.com", "old.example.com", "other.example.com"},
		},
		"OverThePlansLimit": {
			limit: 2,
			body: func(map[string]string) string {
				return fmt.Sprintf(`{"posts":[%s,%s,%s]}`, cname("a"), cname("b"), cname("c"))
			},
			wantStatus: 400, wantCodes: []int{1004},
			wantNames: []string{"keep.example.com", "old.example.com", "other.example.com"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}, DNSBatchLimit: tc.limit, RateLimit: 100})
			srv := httptest.NewServer(s)
			defer srv.Close()
			ids := map[string]string{}
			for _, n := range []string{"old", "keep", "other"} {
				ids[n] = seed(t, s, srv, n)
			}
			s.ResetStats()
			r := checkedCall(t, srv, "POST", records+"/batch", tc.body(ids))
			if r.Status != tc.wantStatus || !cmp.Equal(codes(r), tc.wantCodes) {
				t.Fatalf("batch: %d %v, want %d %v", r.Status, codes(r), tc.wantStatus, tc.wantCodes)
			}
			if diff := cmp.Diff(tc.wantNames, names(s)); diff != "" {
				t.Errorf("records after the batch (-want +got):\n%s", diff)
			}
			if got := s.Stats()["dns_records.batch"].Requests; got != 1 || s.TotalRequests() != 1 {
				t.Errorf("requests counted: batch %d, total %d; want one request for the whole batch", got, s.TotalRequests())
			}
			if tc.wantStatus != 200 {
				return
			}
			var res struct {
				Posts []struct{ Name string }
			}
			if err := json.Unmarshal(r.Body.Result, &res); err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, p := range res.Posts {
				got = append(got, p.Name)
			}
			if diff := cmp.Diff(tc.wantPosts, got); diff != "" {
				t.Errorf("posts in the result (-want +got):\n%s", diff)
			}
		})
	}
}
