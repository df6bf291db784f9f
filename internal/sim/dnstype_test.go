package sim

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// heldBy lists the records of name, each "TYPE content".
func heldBy(s *Server, name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, r := range s.records {
		if r.Name == name {
			out = append(out, r.Type+" "+r.Content)
		}
	}
	return out
}

// TestTypeChangesAreRefused: since 2026-06-30 Cloudflare refuses an update
// that changes a record's type, through PUT, PATCH and a batch's puts and
// patches alike; the record is left as it was and a batch holding such an
// update applies nothing. Other updates still go through; a batch that deletes the
// record and posts its successor is the way to change the type.
func TestTypeChangesAreRefused(t *testing.T) {
	records := "/zones/" + ZoneID(zoneName) + "/dns_records"
	const host = "app." + zoneName
	aRecord := fmt.Sprintf(`{"name":%q,"type":"A","content":"192.0.2.1","ttl":1,"comment":"made"}`, host)
	cases := map[string]struct {
		method, path func(id string) string
		body         func(id string) string
		wantStatus   int
		wantCodes    []int
		wantHeld     []string
	}{
		"PutChangingTheType": {
			method: func(string) string { return "PUT" }, path: func(id string) string { return records + "/" + id },
			body:       func(string) string { return cname("app") },
			wantStatus: 400, wantCodes: []int{codeTypeChange}, wantHeld: []string{"A 192.0.2.1"},
		},
		"PatchChangingTheType": {
			method: func(string) string { return "PATCH" }, path: func(id string) string { return records + "/" + id },
			body: func(string) string {
				return fmt.Sprintf(`{"name":%q,"type":"AAAA","content":"2001:db8::1","ttl":1}`, host)
			},
			wantStatus: 400, wantCodes: []int{codeTypeChange}, wantHeld: []string{"A 192.0.2.1"},
		},
		"BatchPutChangingTheType": {
			method: func(string) string { return "POST" }, path: func(string) string { return records + "/batch" },
			body: func(id string) string {
				return fmt.Sprintf(`{"posts":[%s],"puts":[{"id":%q,"name":%q,"type":"CNAME","content":"t.cfargotunnel.com","ttl":1}]}`, cname("other"), id, host)
			},
			wantStatus: 400, wantCodes: []int{codeTypeChange}, wantHeld: []string{"A 192.0.2.1"},
		},
		"BatchPatchChangingTheType": {
			method: func(string) string { return "POST" }, path: func(string) string { return records + "/batch" },
			body: func(id string) string {
				return fmt.Sprintf(`{"patches":[{"id":%q,"name":%q,"type":"TXT","content":"\"hello\"","ttl":1}]}`, id, host)
			},
			wantStatus: 400, wantCodes: []int{codeTypeChange}, wantHeld: []string{"A 192.0.2.1"},
		},
		"PutKeepingTheType": {
			method: func(string) string { return "PUT" }, path: func(id string) string { return records + "/" + id },
			body:       func(string) string { return fmt.Sprintf(`{"name":%q,"type":"A","content":"192.0.2.2","ttl":1}`, host) },
			wantStatus: 200, wantHeld: []string{"A 192.0.2.2"},
		},
		"PatchKeepingTheType": {
			method: func(string) string { return "PATCH" }, path: func(id string) string { return records + "/" + id },
			body: func(string) string {
				return fmt.Sprintf(`{"name":%q,"type":"A","content":"192.0.2.3","ttl":1}`, host)
			},
			wantStatus: 200, wantHeld: []string{"A 192.0.2.3"},
		},
		"BatchDeletingAndPostingTheNewType": {
			method: func(string) string { return "POST" }, path: func(string) string { return records + "/batch" },
			body: func(id string) string {
				return fmt.Sprintf(`{"deletes":[{"id":%q}],"posts":[%s]}`, id, cname("app"))
			},
			wantStatus: 200, wantHeld: []string{"CNAME t.cfargotunnel.com"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}})
			srv := httptest.NewServer(s)
			defer srv.Close()
			r := checkedCall(t, srv, "POST", records, aRecord)
			var rec struct{ ID string }
			if r.Status != 200 || json.Unmarshal(r.Body.Result, &rec) != nil {
				t.Fatalf("seeding: %d %v", r.Status, codes(r))
			}
			r = checkedCall(t, srv, tc.method(rec.ID), tc.path(rec.ID), tc.body(rec.ID))
			if r.Status != tc.wantStatus || !cmp.Equal(codes(r), tc.wantCodes) {
				t.Fatalf("%d %v (%+v), want %d %v", r.Status, codes(r), r.Body.Errors, tc.wantStatus, tc.wantCodes)
			}
			if diff := cmp.Diff(tc.wantHeld, heldBy(s, host)); diff != "" {
				t.Errorf("%s's records (-want +got):\n%s", host, diff)
			}
			if tc.wantStatus != 200 {
				if diff := cmp.Diff([]string{host}, names(s)); diff != "" {
					t.Errorf("a refused request changed the zone (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestDNSWatch: the watch records a watched name's records after every DNS
// write, a batch as one step, and nothing about other names.
func TestDNSWatch(t *testing.T) {
	records := "/zones/" + ZoneID(zoneName) + "/dns_records"
	s := New(Options{Token: token, AccountID: account, Zones: []string{zoneName}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	w := s.WatchDNS("APP." + zoneName + ".")
	r := checkedCall(t, srv, "POST", records, `{"name":"app","type":"A","content":"192.0.2.1","ttl":1}`)
	var rec struct{ ID string }
	if r.Status != 200 || json.Unmarshal(r.Body.Result, &rec) != nil {
		t.Fatalf("create: %d %v", r.Status, codes(r))
	}
	if r := checkedCall(t, srv, "POST", records, cname("other")); r.Status != 200 {
		t.Fatalf("create other: %d %v", r.Status, codes(r))
	}
	if r := checkedCall(t, srv, "POST", records+"/batch", fmt.Sprintf(`{"deletes":[{"id":%q}],"posts":[%s]}`, rec.ID, cname("app"))); r.Status != 200 {
		t.Fatalf("batch: %d %v", r.Status, codes(r))
	}
	if r := checkedCall(t, srv, "PUT", records+"/"+rec.ID, cname("app")); r.Status != 404 {
		t.Fatalf("a refused write: %d %v, want 404", r.Status, codes(r))
	}
	steps := s.StopDNSWatch(w)
	if r := checkedCall(t, srv, "POST", records, cname("after")); r.Status != 200 {
		t.Fatalf("create after: %d %v", r.Status, codes(r))
	}
	got := []string{}
	for _, st := range steps {
		got = append(got, st.String())
	}
	want := []string{
		"after start: app.example.com has []",
		"after dns_records.create: app.example.com has [A 192.0.2.1]",
		"after dns_records.create: app.example.com has [A 192.0.2.1]",
		"after dns_records.batch: app.example.com has [CNAME t.cfargotunnel.com]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
}
