package publichostname_test

import (
	"testing"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/publichostname"
)

func TestPassing(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want bool
	}{
		"BudgetQueueOutlastedTheReconcile": {"create failed: cannot create DNS record: Post \"https://api.cloudflare.com/client/v4/zones/x/dns_records\": context deadline exceeded", true},
		"RateLimited":                      {"create failed: cannot create DNS record: Cloudflare API returned 429: 971 Please wait", true},
		"ServerError":                      {"create failed: cannot create DNS record: Cloudflare API returned 503: Service Unavailable", true},
		"Network":                          {"observe failed: cannot look for existing DNS records: dial tcp 1.2.3.4:443: connect: connection refused", true},
		"ForeignRecordInTheWay":            {"create failed: conflict: a CNAME record for a.example.com already exists in zone example.com and was not created by this resource", false},
		"NoZone":                           {"observe failed: cannot resolve the record's zone: no zone in the account matches a.example.org; set zoneId or zoneName", false},
		"CloudflareRefusesTheRecord":       {"create failed: cannot create DNS record: Cloudflare API returned 400: 9007 Content for CNAME record is invalid", false},
		"ZoneNotAllowed":                   {"not allowed: zone example.org is not in the provider config's allowed zones", false},
		"A5xxLookingCodeIsNotAStatus":      {"Cloudflare API returned 400: 5001 something", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := publichostname.Passing(tc.msg); got != tc.want {
				t.Errorf("Passing(%q) = %v, want %v", tc.msg, got, tc.want)
			}
		})
	}
}
