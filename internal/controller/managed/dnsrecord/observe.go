package dnsrecord

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/controller/managed/mr"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// desired is the record the spec asks for, with the ownership marker mark
// in its comment. Every write carries the marker: that is how an imported
// record is handed over to this managed resource on its first update.
func desired(p v1alpha1.DNSRecordParameters, mark ownership.Mark) cloudflare.DNSRecord {
	r := cloudflare.DNSRecord{
		Name:    normalizeName(p.Name),
		Type:    strings.ToUpper(p.Type),
		Content: strings.TrimSpace(p.Content),
		Proxied: ptr.Deref(p.Proxied, false),
		TTL:     int(ptr.Deref(p.TTL, 1)),
		Comment: ownership.Comment(ptr.Deref(p.Comment, ""), mark),
		Tags:    p.Tags,
	}
	if r.Proxied {
		// Cloudflare forces automatic TTL on proxied records.
		r.TTL = 1
	}
	return r
}

// observation maps a record to status.
func observation(r *cloudflare.DNSRecord, z zoneRef) v1alpha1.DNSRecordObservation {
	return v1alpha1.DNSRecordObservation{
		ID:         r.ID,
		ZoneID:     z.ID,
		ZoneName:   z.Name,
		Name:       r.Name,
		Proxied:    r.Proxied,
		TTL:        int64(r.TTL),
		CreatedOn:  mr.Time(r.CreatedOn),
		ModifiedOn: mr.Time(r.ModifiedOn),
	}
}

// lateInitialize fills unset optional fields from Cloudflare's defaults, so
// the spec shows what is in effect and stops being ambiguous. It fills them
// only as the schema allows (a proxied record's ttl is 1): an imported
// record may be unproxied with ttl 300 while the spec asks for it proxied,
// and a spec the API server refuses would stop the resource for good.
func lateInitialize(p *v1alpha1.DNSRecordParameters, r *cloudflare.DNSRecord) bool {
	changed := false
	wantsTTL := p.TTL != nil && *p.TTL != 1
	if p.Proxied == nil && (!r.Proxied || !wantsTTL) {
		p.Proxied = ptr.To(r.Proxied)
		changed = true
	}
	if p.TTL == nil {
		ttl := int64(r.TTL)
		if ptr.Deref(p.Proxied, false) {
			ttl = 1
		}
		p.TTL = ptr.To(ttl)
		changed = true
	}
	return changed
}

// Diff compares the desired record with the one in Cloudflare and returns a
// readable difference, one field per line, or "" when they agree. Fields
// the spec leaves unset are Cloudflare's to choose. mark is the managed
// resource's: a record without it (an imported one, or one marked by an
// earlier version or under another owner ID) differs, so the first update
// hands it over.
func Diff(want v1alpha1.DNSRecordParameters, got *cloudflare.DNSRecord, mark ownership.Mark) string {
	var d []string
	add := func(field string, have, desire any) {
		d = append(d, fmt.Sprintf("%s: %v in Cloudflare, %v desired", field, have, desire))
	}
	if normalizeName(got.Name) != normalizeName(want.Name) {
		add("name", quote(got.Name), quote(want.Name))
	}
	if !strings.EqualFold(got.Type, want.Type) {
		add("type", got.Type, want.Type)
	}
	if !sameContent(want.Type, got.Content, want.Content) {
		add("content", quote(got.Content), quote(want.Content))
	}
	if want.Proxied != nil && *want.Proxied != got.Proxied {
		add("proxied", got.Proxied, *want.Proxied)
	}
	// Cloudflare forces TTL 1 (automatic) on proxied records; comparing it
	// would fight Cloudflare forever.
	proxied := ptr.Deref(want.Proxied, got.Proxied)
	if want.TTL != nil && !proxied && int64(got.TTL) != *want.TTL {
		add("ttl", got.TTL, *want.TTL)
	}
	user, owner, _ := ownership.Split(got.Comment)
	if user != ptr.Deref(want.Comment, "") {
		add("comment", quote(user), quote(ptr.Deref(want.Comment, "")))
	}
	if owner != mark {
		add("ownership marker", quote(string(owner)), quote(string(mark)))
	}
	if !sameTags(got.Tags, want.Tags) {
		add("tags", got.Tags, want.Tags)
	}
	return strings.Join(d, "\n")
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// hostnameContent lists the types whose content is a hostname, which DNS
// compares case-insensitively and with or without the trailing dot.
var hostnameContent = map[string]bool{"CNAME": true, "NS": true, "PTR": true, "MX": true}

// sameContent compares record contents as DNS does for the type: addresses
// by value ("2001:DB8::1" is "2001:db8::1"), hostnames case-insensitively,
// anything else (TXT…) exactly.
func sameContent(typ, a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	switch t := strings.ToUpper(typ); {
	case t == "A" || t == "AAAA":
		x, errX := netip.ParseAddr(a)
		y, errY := netip.ParseAddr(b)
		if errX == nil && errY == nil {
			return x == y
		}
		return strings.EqualFold(a, b)
	case hostnameContent[t]:
		return normalizeName(a) == normalizeName(b)
	default:
		return a == b
	}
}

// sameTags compares tag sets: order is not significant, and absent equals
// empty.
func sameTags(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// addressTypes may not share a name with a CNAME.
var addressTypes = map[string]bool{"A": true, "AAAA": true, "CNAME": true}

// conflicts reports whether a record of type other on the same name stands
// in the way of a record of type typ: the same type (creating a second one
// would change what the name resolves to, under someone else's feet), a
// CNAME next to an A, AAAA or CNAME, or an NS record next to anything (both
// refused by Cloudflare as well).
func conflicts(typ, other string) bool {
	typ, other = strings.ToUpper(typ), strings.ToUpper(other)
	switch {
	case typ == other:
		return true
	case (typ == "CNAME" && addressTypes[other]) || (other == "CNAME" && addressTypes[typ]):
		return true
	case typ == "NS" || other == "NS":
		return true
	}
	return false
}

// classify sorts the records of one name into the one this managed resource
// made (by marker: the same type preferred, else any, since a record
// carrying this resource's marker is this resource's whatever its type) and
// the first record that is not ours and conflicts with the desired type.
func classify(rs []cloudflare.DNSRecord, id ownership.Identity, typ string) (ours, conflict *cloudflare.DNSRecord) {
	for i := range rs {
		r := &rs[i]
		_, mark, _ := ownership.Split(r.Comment)
		switch {
		case id.Made(mark):
			if ours == nil || (!strings.EqualFold(ours.Type, typ) && strings.EqualFold(r.Type, typ)) {
				ours = r
			}
		case conflict == nil && conflicts(typ, r.Type):
			conflict = r
		}
	}
	return ours, conflict
}
