package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

type zone struct {
	ID                  string         `json:"id"`
	Name                string         `json:"name"`
	Status              string         `json:"status"`
	Paused              bool           `json:"paused"`
	Type                string         `json:"type"`
	DevelopmentMode     int            `json:"development_mode"`
	NameServers         []string       `json:"name_servers"`
	OriginalNameServers []string       `json:"original_name_servers"`
	OriginalRegistrar   *string        `json:"original_registrar"`
	OriginalDNSHost     *string        `json:"original_dnshost"`
	CreatedOn           time.Time      `json:"created_on"`
	ModifiedOn          time.Time      `json:"modified_on"`
	ActivatedOn         time.Time      `json:"activated_on"`
	Account             map[string]any `json:"account"`
	Owner               map[string]any `json:"owner"`
	Meta                map[string]any `json:"meta"`
	Plan                map[string]any `json:"plan"`
}

// ZoneID is the ID the simulator gives a zone name: stable, so tests and the
// sandbox can predict it.
func ZoneID(name string) string {
	sum := sha256.Sum256([]byte("zone:" + strings.ToLower(name)))
	return hex.EncodeToString(sum[:16])
}

func newZone(name, account string, now time.Time) *zone {
	now = now.UTC()
	return &zone{
		ID: ZoneID(name), Name: strings.ToLower(name), Status: "active", Type: "full",
		NameServers: []string{"ada.ns.cloudflare.com", "bob.ns.cloudflare.com"}, OriginalNameServers: []string{},
		CreatedOn: now, ModifiedOn: now, ActivatedOn: now,
		Account: map[string]any{"id": account, "name": "Simulated account"},
		Owner:   map[string]any{"type": "user"},
		Meta:    map[string]any{"phishing_detected": false},
		Plan:    map[string]any{"id": "00000000000000000000000000000000", "name": "Free Website", "price": 0, "currency": "USD", "frequency": "", "is_subscribed": true, "can_subscribe": false, "legacy_id": "free", "legacy_discount": false, "externally_managed": false},
	}
}

// matchOp applies Cloudflare's filter operators (equal:, starts_with:, …).
func matchOp(value, filter string) bool {
	op, arg, found := strings.Cut(filter, ":")
	if !found {
		return strings.EqualFold(value, filter)
	}
	cs := strings.HasSuffix(op, "_case_sensitive")
	op = strings.TrimSuffix(op, "_case_sensitive")
	if !cs {
		value, arg = strings.ToLower(value), strings.ToLower(arg)
	}
	switch op {
	case "equal":
		return value == arg
	case "not_equal":
		return value != arg
	case "starts_with":
		return strings.HasPrefix(value, arg)
	case "ends_with":
		return strings.HasSuffix(value, arg)
	case "contains":
		return strings.Contains(value, arg)
	}
	return strings.EqualFold(value, filter)
}

func (s *Server) listZones(r *http.Request, _ []byte) (any, any, *apiError) {
	q := r.URL.Query()
	var out []*zone
	for _, z := range s.zones {
		if v := q.Get("name"); v != "" && !matchOp(z.Name, v) {
			continue
		}
		if v := q.Get("status"); v != "" && z.Status != v {
			continue
		}
		if v := q.Get("account.id"); v != "" && z.Account["id"] != v {
			continue
		}
		out = append(out, z)
	}
	page, info, err := paginate(r, out, 5, 50, 20, true)
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

type dnsRecord struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Content   string         `json:"content"`
	Proxied   bool           `json:"proxied"`
	Proxiable bool           `json:"proxiable"`
	TTL       int            `json:"ttl"`
	Comment   string         `json:"comment"`
	Tags      []string       `json:"tags"`
	Settings  map[string]any `json:"settings"`
	// Data is required by the schema for every type; address and CNAME
	// records have no structured data, so it is empty.
	Data              map[string]any `json:"data"`
	Meta              map[string]any `json:"meta"`
	CreatedOn         time.Time      `json:"created_on"`
	ModifiedOn        time.Time      `json:"modified_on"`
	CommentModifiedOn *time.Time     `json:"comment_modified_on,omitempty"`
	TagsModifiedOn    *time.Time     `json:"tags_modified_on,omitempty"`
	zoneID            string
}

type recordInput struct {
	Name     *string        `json:"name"`
	Type     *string        `json:"type"`
	Content  *string        `json:"content"`
	Proxied  *bool          `json:"proxied"`
	TTL      *float64       `json:"ttl"`
	Comment  *string        `json:"comment"`
	Tags     []string       `json:"tags"`
	Settings map[string]any `json:"settings"`
}

func (s *Server) findZone(r *http.Request) (*zone, *apiError) {
	id := r.PathValue("zone_id")
	if !isHex32(id) {
		return nil, badID(r)
	}
	for _, z := range s.zones {
		if z.ID == id {
			return z, nil
		}
	}
	return nil, errf(http.StatusNotFound, 1001, "Invalid zone identifier")
}

func (s *Server) findRecord(r *http.Request, z *zone) (*dnsRecord, int, *apiError) {
	id := r.PathValue("dns_record_id")
	if !isHex32(id) {
		return nil, -1, badID(r)
	}
	for i, rec := range s.records {
		if rec.ID == id && rec.zoneID == z.ID {
			return rec, i, nil
		}
	}
	return nil, -1, errf(http.StatusNotFound, 81044, "Record does not exist.")
}

// fqdn expands a relative record name ("@", "www") within the zone.
func fqdn(name string, z *zone) string {
	n := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
	switch {
	case n == "@" || n == "":
		return z.Name
	case n == z.Name || strings.HasSuffix(n, "."+z.Name):
		return n
	default:
		return n + "." + z.Name
	}
}

// apply merges in into rec and validates the result, including Cloudflare's
// conflict rules against the zone's other records.
func (s *Server) apply(rec *dnsRecord, in recordInput, z *zone) *apiError {
	now := s.now()
	if in.Name != nil {
		rec.Name = fqdn(*in.Name, z)
	}
	if in.Type != nil {
		rec.Type = strings.ToUpper(*in.Type)
	}
	if in.Content != nil {
		rec.Content = strings.TrimSpace(*in.Content)
	}
	if in.Proxied != nil {
		rec.Proxied = *in.Proxied
	}
	if in.TTL != nil {
		rec.TTL = int(*in.TTL)
	}
	if in.Comment != nil && rec.Comment != *in.Comment {
		rec.Comment = *in.Comment
		rec.CommentModifiedOn = ptrTime(now)
	}
	if in.Tags != nil {
		rec.Tags = append([]string{}, in.Tags...)
		rec.TagsModifiedOn = ptrTime(now)
	}
	if in.Settings != nil {
		rec.Settings = in.Settings
	}
	if rec.Name == "" || rec.Type == "" {
		return errf(http.StatusBadRequest, 9005, "name and type are required")
	}
	switch rec.Type {
	case "A", "AAAA", "CNAME", "TXT", "MX", "NS", "CAA", "SRV", "PTR", "HTTPS", "SVCB", "URI", "LOC", "CERT", "DNSKEY", "DS", "NAPTR", "SMIMEA", "SSHFP", "TLSA", "OPENPGPKEY":
	default:
		return errf(http.StatusBadRequest, 9005, "unsupported record type %q", rec.Type)
	}
	if rec.Content == "" {
		return errf(http.StatusBadRequest, 9005, "content is required")
	}
	if rec.Type == "CNAME" && strings.EqualFold(strings.TrimSuffix(rec.Content, "."), rec.Name) {
		return errf(http.StatusBadRequest, 9007, "Content for CNAME record is invalid: it must not match the record's name")
	}
	rec.Proxiable = rec.Type == "A" || rec.Type == "AAAA" || rec.Type == "CNAME"
	if rec.Proxied && !rec.Proxiable {
		return errf(http.StatusBadRequest, 9004, "This record type cannot be proxied.")
	}
	if rec.Proxied || rec.TTL == 0 {
		rec.TTL = 1
	}
	if rec.TTL != 1 && (rec.TTL < 30 || rec.TTL > 86400) {
		return errf(http.StatusBadRequest, 9021, "Invalid TTL. Must be between 60 and 86400 seconds, or 1 for Automatic.")
	}
	if rec.Tags == nil {
		rec.Tags = []string{}
	}
	if rec.Settings == nil {
		rec.Settings = map[string]any{}
	}
	if rec.Data == nil {
		rec.Data = map[string]any{}
	}
	for _, o := range s.records {
		if o == rec || o.zoneID != z.ID || o.Name != rec.Name {
			continue
		}
		if o.Type == rec.Type && strings.EqualFold(o.Content, rec.Content) {
			return errf(http.StatusBadRequest, 81057, "Record already exists.")
		}
		addr := func(t string) bool { return t == "A" || t == "AAAA" || t == "CNAME" }
		if (rec.Type == "CNAME" && addr(o.Type)) || (o.Type == "CNAME" && addr(rec.Type)) {
			return errf(http.StatusBadRequest, 81053, "An A, AAAA, or CNAME record with that host already exists.")
		}
		if rec.Type == "NS" || o.Type == "NS" {
			return errf(http.StatusBadRequest, 81056, "NS records cannot exist on the same name as any other record type.")
		}
	}
	rec.ModifiedOn = now
	return nil
}

func (s *Server) createRecord(r *http.Request, body []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	var in recordInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	rec := &dnsRecord{ID: newHex32(), zoneID: z.ID, CreatedOn: s.now(), Meta: map[string]any{}}
	if err := s.apply(rec, in, z); err != nil {
		return nil, nil, err
	}
	s.records = append(s.records, rec)
	s.checkDNSWatches("dns_records.create")
	return rec, nil, nil
}

// textFilter applies a DNS list filter family such as content,
// content.exact, content.contains… (all case-insensitive).
func textFilter(q map[string][]string, field, value string, present bool) bool {
	v := strings.ToLower(value)
	get := func(k string) (string, bool) {
		x, ok := q[k]
		if !ok {
			return "", false
		}
		return strings.ToLower(x[0]), true
	}
	if x, ok := get(field); ok && v != x {
		return false
	}
	if x, ok := get(field + ".exact"); ok && v != x {
		return false
	}
	if x, ok := get(field + ".contains"); ok && !strings.Contains(v, x) {
		return false
	}
	if x, ok := get(field + ".startswith"); ok && !strings.HasPrefix(v, x) {
		return false
	}
	if x, ok := get(field + ".endswith"); ok && !strings.HasSuffix(v, x) {
		return false
	}
	if _, ok := get(field + ".present"); ok && !present {
		return false
	}
	if _, ok := get(field + ".absent"); ok && present {
		return false
	}
	return true
}

func (s *Server) listRecords(r *http.Request, _ []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	q := r.URL.Query()
	var out []*dnsRecord
	for _, rec := range s.records {
		if rec.zoneID != z.ID || !s.listable(rec.CreatedOn) {
			continue
		}
		if v := q.Get("type"); v != "" && !strings.EqualFold(rec.Type, v) {
			continue
		}
		if v := q.Get("proxied"); v != "" && strconv.FormatBool(rec.Proxied) != v {
			continue
		}
		comment := rec.Comment
		if !textFilter(q, "name", rec.Name, true) || !textFilter(q, "content", rec.Content, true) || !textFilter(q, "comment", comment, comment != "") {
			continue
		}
		if !tagsMatch(q, rec.Tags) {
			continue
		}
		out = append(out, rec)
	}
	order := q.Get("order")
	desc := q.Get("direction") == "desc"
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		var less bool
		switch order {
		case "name":
			less = a.Name < b.Name
		case "content":
			less = a.Content < b.Content
		case "ttl":
			less = a.TTL < b.TTL
		case "proxied":
			less = !a.Proxied && b.Proxied
		default:
			less = a.Type < b.Type
		}
		if desc {
			return !less
		}
		return less
	})
	page, info, perr := paginate(r, out, 1, 5000000, 100, true)
	if perr != nil {
		return nil, nil, perr
	}
	return page, info, nil
}

// tagsMatch applies tag filters: tag=name:value (exact), tag.present=name,
// tag.absent=name.
func tagsMatch(q map[string][]string, tags []string) bool {
	has := func(want string) bool {
		for _, t := range tags {
			if strings.EqualFold(t, want) {
				return true
			}
		}
		return false
	}
	hasName := func(name string) bool {
		for _, t := range tags {
			n, _, _ := strings.Cut(t, ":")
			if strings.EqualFold(n, name) {
				return true
			}
		}
		return false
	}
	for _, v := range q["tag"] {
		if !has(v) {
			return false
		}
	}
	for _, v := range q["tag.exact"] {
		if !has(v) {
			return false
		}
	}
	for _, v := range q["tag.present"] {
		if !hasName(v) {
			return false
		}
	}
	for _, v := range q["tag.absent"] {
		if hasName(v) {
			return false
		}
	}
	return true
}

func (s *Server) getRecord(r *http.Request, _ []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	rec, _, err := s.findRecord(r, z)
	return rec, nil, err
}

func (s *Server) editRecord(r *http.Request, body []byte) (any, any, *apiError) {
	return s.changeRecord(r, body, false)
}

func (s *Server) updateRecord(r *http.Request, body []byte) (any, any, *apiError) {
	return s.changeRecord(r, body, true)
}

// changeRecord is PATCH (merge) or PUT (overwrite). Validation happens on a
// copy so a rejected change leaves the record as it was.
func (s *Server) changeRecord(r *http.Request, body []byte, overwrite bool) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	rec, i, err := s.findRecord(r, z)
	if err != nil {
		return nil, nil, err
	}
	var in recordInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if err := refuseTypeChange(rec, in); err != nil {
		return nil, nil, err
	}
	next := *rec
	if overwrite {
		next = dnsRecord{ID: rec.ID, zoneID: rec.zoneID, CreatedOn: rec.CreatedOn, Meta: rec.Meta}
	}
	s.records[i] = &next
	if err := s.apply(&next, in, z); err != nil {
		s.records[i] = rec
		return nil, nil, err
	}
	op := "dns_records.edit"
	if overwrite {
		op = "dns_records.update"
	}
	s.checkDNSWatches(op)
	return &next, nil, nil
}

// refuseTypeChange is Cloudflare's answer, since 2026-06-30, to an update
// (PUT, PATCH, or a batch's puts and patches) that changes a record's type:
// the record must be deleted and created again, or both done in one batch
// (cloudflare-docs, src/content/release-notes/api-deprecations.yaml, "DNS
// Record Type Updates via API"). The deprecation names no status, code or
// message. 400 and code 1004 are a GUESS (a DNS validation error, as the
// batch limit's); the message is the one Cloudflare gave for the same
// refusal before it allowed type changes (hashicorp/terraform#5316).
func refuseTypeChange(rec *dnsRecord, in recordInput) *apiError {
	if in.Type == nil || strings.EqualFold(strings.TrimSpace(*in.Type), rec.Type) {
		return nil
	}
	return errf(http.StatusBadRequest, codeTypeChange, "Editing types after a record has been created is not allowed. Delete the %s record and create the %s record instead, or do both in one batch.", rec.Type, strings.ToUpper(*in.Type))
}

// codeTypeChange is the error code of an update that changes a record's
// type (refuseTypeChange): a GUESS.
const codeTypeChange = 1004

func (s *Server) deleteRecord(r *http.Request, _ []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	rec, i, err := s.findRecord(r, z)
	if err != nil {
		return nil, nil, err
	}
	s.records = append(s.records[:i], s.records[i+1:]...)
	s.checkDNSWatches("dns_records.delete")
	return map[string]string{"id": rec.ID}, nil, nil
}

// batchInput is the body of POST /zones/{zone_id}/dns_records/batch.
type batchInput struct {
	Deletes []struct {
		ID string `json:"id"`
	} `json:"deletes"`
	Patches []batchChange `json:"patches"`
	Puts    []batchChange `json:"puts"`
	Posts   []recordInput `json:"posts"`
}

type batchChange struct {
	ID string `json:"id"`
	recordInput
}

type batchResult struct {
	Deletes []*dnsRecord `json:"deletes"`
	Patches []*dnsRecord `json:"patches"`
	Puts    []*dnsRecord `json:"puts"`
	Posts   []*dnsRecord `json:"posts"`
}

// batchRecords applies a batch as Cloudflare does: in one transaction, in
// the order deletes, patches, puts, posts, each list in the order given.
// The first failing operation fails the whole batch with its error and
// nothing is applied. The rate limit counts the batch as one request.
func (s *Server) batchRecords(r *http.Request, body []byte) (any, any, *apiError) {
	z, err := s.findZone(r)
	if err != nil {
		return nil, nil, err
	}
	var in batchInput
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	limit := s.opts.DNSBatchLimit
	if limit <= 0 {
		limit = DefaultDNSBatchLimit
	}
	if n := len(in.Deletes) + len(in.Patches) + len(in.Puts) + len(in.Posts); n > limit {
		// Cloudflare documents the limit (200 on a free zone) but not its
		// error code; this one is the simulator's.
		return nil, nil, errf(http.StatusBadRequest, 1004, "DNS Validation Error: batch contains %d operations; the zone's plan allows at most %d", n, limit)
	}
	saved := append([]*dnsRecord(nil), s.records...)
	res, aerr := s.runBatch(r, z, in)
	if aerr != nil {
		s.records = saved
		return nil, nil, aerr
	}
	s.checkDNSWatches("dns_records.batch")
	return res, nil, nil
}

func (s *Server) runBatch(r *http.Request, z *zone, in batchInput) (*batchResult, *apiError) {
	res := &batchResult{Deletes: []*dnsRecord{}, Patches: []*dnsRecord{}, Puts: []*dnsRecord{}, Posts: []*dnsRecord{}}
	for _, d := range in.Deletes {
		i, err := s.recordIndex(r, z, d.ID)
		if err != nil {
			return nil, err
		}
		res.Deletes = append(res.Deletes, s.records[i])
		s.records = append(s.records[:i:i], s.records[i+1:]...)
	}
	for n, c := range append(append([]batchChange{}, in.Patches...), in.Puts...) {
		overwrite := n >= len(in.Patches) // puts follow the patches
		i, err := s.recordIndex(r, z, c.ID)
		if err != nil {
			return nil, err
		}
		rec := s.records[i]
		if err := refuseTypeChange(rec, c.recordInput); err != nil {
			return nil, err
		}
		next := *rec
		if overwrite {
			next = dnsRecord{ID: rec.ID, zoneID: rec.zoneID, CreatedOn: rec.CreatedOn, Meta: rec.Meta}
		}
		s.records[i] = &next
		if err := s.apply(&next, c.recordInput, z); err != nil {
			return nil, err
		}
		if overwrite {
			res.Puts = append(res.Puts, &next)
		} else {
			res.Patches = append(res.Patches, &next)
		}
	}
	for _, p := range in.Posts {
		rec := &dnsRecord{ID: newHex32(), zoneID: z.ID, CreatedOn: s.now(), Meta: map[string]any{}}
		if err := s.apply(rec, p, z); err != nil {
			return nil, err
		}
		s.records = append(s.records, rec)
		res.Posts = append(res.Posts, rec)
	}
	return res, nil
}

// recordIndex finds a record of zone z by ID for a batch operation.
func (s *Server) recordIndex(r *http.Request, z *zone, id string) (int, *apiError) {
	if !isHex32(id) {
		return -1, badID(r)
	}
	for i, rec := range s.records {
		if rec.ID == id && rec.zoneID == z.ID {
			return i, nil
		}
	}
	return -1, errf(http.StatusNotFound, 81044, "Record does not exist.")
}
