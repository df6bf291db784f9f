package dnsrecord

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/zonename"
)

// zoneRef is a resolved zone. Name is empty when only the ID is known (a
// zoneId the account's zone list does not show).
type zoneRef struct {
	ID   string
	Name string
}

// label is how the zone is named in messages.
func (z zoneRef) label() string {
	if z.Name != "" {
		return z.Name
	}
	return z.ID
}

// errNoZone is a definitive "the account has no such zone" answer, as
// opposed to a failed lookup.
type errNoZone struct {
	msg string
	// hint is what to change, if anything; zoneOf words it for whoever
	// writes the record's name (fix).
	hint string
}

func (e *errNoZone) Error() string {
	if e.hint == "" {
		return e.msg
	}
	return e.msg + "; " + e.hint
}

func isNoZone(err error) bool {
	var nz *errNoZone
	return errors.As(err, &nz)
}

// normalizeName is a DNS name as Cloudflare compares it (zonename.Normalize).
func normalizeName(n string) string { return zonename.Normalize(n) }

// inZone reports whether name is the zone's apex or below it, on a label
// boundary (zonename.In).
func inZone(name, zone string) bool { return zonename.In(name, zone) }

// longestSuffixZone picks the most specific of the account's zones the
// record name belongs to (zonename.Closest).
func longestSuffixZone(name string, zones []cloudflare.Zone) (cloudflare.Zone, bool) {
	return zonename.Closest(name, zones, func(z cloudflare.Zone) string { return z.Name })
}

// statusZoneStillDesired reports whether the zone recorded in status is
// still the one the spec asks for, so it can be used without a lookup. A
// changed zoneId or zoneName, a name outside the recorded zone, or (when the
// zone comes from the name's suffix) a changed name means the spec must be
// resolved again: the new name may belong to a more specific zone.
func statusZoneStillDesired(p v1alpha1.DNSRecordParameters, at v1alpha1.DNSRecordObservation) bool {
	if at.ZoneID == "" || (at.ZoneName != "" && !inZone(p.Name, at.ZoneName)) {
		return false
	}
	switch {
	case p.ZoneID != nil:
		return *p.ZoneID == at.ZoneID
	case p.ZoneName != nil:
		return at.ZoneName != "" && normalizeName(*p.ZoneName) == normalizeName(at.ZoneName)
	default:
		return at.ZoneName != "" && normalizeName(p.Name) == normalizeName(at.Name)
	}
}

// Zones rarely change, so lookups are cached for the whole process: a
// steady-state reconcile should cost one GET, not a zone listing. Entries
// expire so a deleted and re-added zone (new ID) or a newly added, more
// specific zone is eventually noticed.
const (
	zoneCacheTTL = 30 * time.Minute
	// A record name no cached zone matches triggers a fresh listing at most
	// this often, so a zone added a moment ago is found quickly while a
	// misconfigured DNSRecord does not list zones on every retry.
	zoneMissRefresh = 30 * time.Second
)

// zoneCache holds the zones of each account, keyed by account ID and zone
// name, plus each account's full zone list for suffix matching. It is safe
// for concurrent use. API calls happen outside the lock, and concurrent
// misses for the same listing share one call: a hundred DNSRecords created
// at once would otherwise each list the zones (measured: 48 listings for
// 100 records at --max-reconcile-rate 100), all of it spent from the
// request budget.
type zoneCache struct {
	now func() time.Time

	mu       sync.Mutex
	accounts map[string]*accountZones
	flight   singleflight.Group
}

// listZones lists the account's zones (name "" for all of them), sharing
// the call with every concurrent caller asking the same.
func (c *zoneCache) listZones(ctx context.Context, api cloudflare.ZonesAPI, account, name string) ([]cloudflare.Zone, error) {
	v, err, _ := c.flight.Do(account+"\x00"+name, func() (any, error) { return api.ListZones(ctx, name) })
	if err != nil {
		return nil, err
	}
	return v.([]cloudflare.Zone), nil
}

type accountZones struct {
	named    map[string]cachedZone // by normalized name
	all      []cloudflare.Zone
	listedAt time.Time
}

type cachedZone struct {
	zone cloudflare.Zone
	at   time.Time
}

func newZoneCache(now func() time.Time) *zoneCache {
	return &zoneCache{now: now, accounts: map[string]*accountZones{}}
}

func (c *zoneCache) account(id string) *accountZones {
	a := c.accounts[id]
	if a == nil {
		a = &accountZones{named: map[string]cachedZone{}}
		c.accounts[id] = a
	}
	return a
}

// byName finds the account's zone with exactly this name.
func (c *zoneCache) byName(ctx context.Context, api cloudflare.ZonesAPI, account, name string) (cloudflare.Zone, error) {
	key := normalizeName(name)
	c.mu.Lock()
	if z, ok := c.account(account).named[key]; ok && c.now().Sub(z.at) < zoneCacheTTL {
		c.mu.Unlock()
		return z.zone, nil
	}
	c.mu.Unlock()

	zs, err := c.listZones(ctx, api, account, key)
	if err != nil {
		return cloudflare.Zone{}, errors.Wrap(err, "cannot look up zone")
	}
	for _, z := range zs {
		if normalizeName(z.Name) == key {
			c.mu.Lock()
			c.account(account).named[key] = cachedZone{zone: z, at: c.now()}
			c.mu.Unlock()
			return z, nil
		}
	}
	return cloudflare.Zone{}, &errNoZone{msg: fmt.Sprintf("no zone named %s in the account", key)}
}

// byID finds a zone's name from the account's zone list. It returns false
// when the list does not show the zone (a token limited to other zones).
func (c *zoneCache) byID(ctx context.Context, api cloudflare.ZonesAPI, account, id string) (cloudflare.Zone, bool, error) {
	all, err := c.list(ctx, api, account, false)
	if err != nil {
		return cloudflare.Zone{}, false, err
	}
	for _, z := range all {
		if z.ID == id {
			return z, true, nil
		}
	}
	return cloudflare.Zone{}, false, nil
}

// bySuffix finds the zone a record name belongs to by longest suffix.
func (c *zoneCache) bySuffix(ctx context.Context, api cloudflare.ZonesAPI, account, name string) (cloudflare.Zone, error) {
	all, err := c.list(ctx, api, account, false)
	if err != nil {
		return cloudflare.Zone{}, err
	}
	if z, ok := longestSuffixZone(name, all); ok {
		return z, nil
	}
	if all, err = c.list(ctx, api, account, true); err != nil {
		return cloudflare.Zone{}, err
	}
	if z, ok := longestSuffixZone(name, all); ok {
		return z, nil
	}
	return cloudflare.Zone{}, &errNoZone{msg: fmt.Sprintf("no zone in the account matches %s", normalizeName(name)), hint: "set zoneId or zoneName"}
}

// list returns the account's zones, listing them when the cached list
// expired or, if missed, when it is older than zoneMissRefresh.
func (c *zoneCache) list(ctx context.Context, api cloudflare.ZonesAPI, account string, missed bool) ([]cloudflare.Zone, error) {
	maxAge := zoneCacheTTL
	if missed {
		maxAge = zoneMissRefresh
	}
	c.mu.Lock()
	a := c.account(account)
	if !a.listedAt.IsZero() && c.now().Sub(a.listedAt) < maxAge {
		all := a.all
		c.mu.Unlock()
		return all, nil
	}
	c.mu.Unlock()

	all, err := c.listZones(ctx, api, account, "")
	if err != nil {
		return nil, errors.Wrap(err, "cannot list zones")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a = c.account(account)
	now := c.now()
	a.all, a.listedAt = all, now
	for _, z := range all {
		a.named[normalizeName(z.Name)] = cachedZone{zone: z, at: now}
	}
	return all, nil
}

// resolveZone finds the zone the spec asks for: zoneId as given, zoneName by
// exact name, else the zone whose name is the longest suffix of the record
// name. A record name outside an explicitly chosen zone is refused, since
// Cloudflare would silently append the zone name to it.
func (c *zoneCache) resolveZone(ctx context.Context, api cloudflare.ZonesAPI, account string, p v1alpha1.DNSRecordParameters) (zoneRef, error) {
	var z zoneRef
	switch {
	case p.ZoneID != nil:
		z.ID = *p.ZoneID
		// The name only improves status and messages: a token that cannot
		// list the account's zones may still manage the zone's records.
		if found, ok, err := c.byID(ctx, api, account, z.ID); err == nil && ok {
			z.Name = normalizeName(found.Name)
		}
	case p.ZoneName != nil:
		found, err := c.byName(ctx, api, account, *p.ZoneName)
		if err != nil {
			return zoneRef{}, err
		}
		z = zoneRef{ID: found.ID, Name: normalizeName(found.Name)}
	default:
		found, err := c.bySuffix(ctx, api, account, p.Name)
		if err != nil {
			return zoneRef{}, err
		}
		return zoneRef{ID: found.ID, Name: normalizeName(found.Name)}, nil
	}
	if z.Name != "" && !inZone(p.Name, z.Name) {
		return zoneRef{}, &errNoZone{msg: fmt.Sprintf("record name %s is not in zone %s", normalizeName(p.Name), z.Name)}
	}
	return z, nil
}
