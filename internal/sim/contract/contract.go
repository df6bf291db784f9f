// Package contract checks HTTP traffic against Cloudflare's published OpenAPI
// document, so that a fake API (and the clients talking to it) cannot drift
// from the real contract unnoticed.
//
// The document is the one cloudflare-go v7 embeds in its scripts/mock file
// (the schema Stainless generated and tested the SDK against). It is read
// from the module cache at run time, so nothing is vendored into this repo.
// Only the paths this provider uses are kept (see usedPaths), with the
// components they reference.
//
// Exceptions, each where the published schema contradicts documented real
// behaviour (see patchKnownQuirks):
//
//   - tunnel_ingressRule: the schema requires hostname, but every
//     cloudflared configuration ends with a catch-all rule that has only a
//     service (e.g. {"service":"http_status:404"}), and cloudflared rejects
//     configurations without one.
//   - tunnel_deleted_at, tunnel_conns_active_at, tunnel_conns_inactive_at:
//     their own descriptions document null ("If `null`, the resource has not
//     been deleted", "... the tunnel is inactive") but the schemas are not
//     nullable, so every live tunnel, route or virtual network would fail.
//   - 4XX envelopes: in most operations (tunnels, hostname routes, DNS
//     records, teamnet routes, virtual networks) result is declared as
//     `enum: [null]` without `nullable: true`, which no value satisfies.
//     The intent is plainly "result is null" (the other failure envelopes
//     say so with nullable), and the API answers "result": null. Only
//     schemas whose sole allowed value is null are made nullable.
//
// Responses with a 5xx status are not checked: the document describes only
// 200 and 4XX, and a fake may inject server errors on purpose. Any other
// status the operation does not document is a violation.
package contract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

const (
	sdkModule  = "github.com/cloudflare/cloudflare-go/v7"
	sdkVersion = "v7.9.0" // only used when `go list` cannot locate the module
	basePrefix = "/client/v4"
)

// usedPaths are the server-relative paths of the operations the provider and
// its fake use. Anything else is rejected as an unknown route, which is what
// we want: the fake should not be serving endpoints nobody checked.
var usedPaths = []string{
	"/accounts/{account_id}/cfd_tunnel",
	"/accounts/{account_id}/cfd_tunnel/{tunnel_id}",
	"/accounts/{account_id}/cfd_tunnel/{tunnel_id}/token",
	"/accounts/{account_id}/cfd_tunnel/{tunnel_id}/connections",
	"/accounts/{account_id}/cfd_tunnel/{tunnel_id}/configurations",
	"/accounts/{account_id}/zerotrust/routes/hostname",
	"/accounts/{account_id}/zerotrust/routes/hostname/{hostname_route_id}",
	"/accounts/{account_id}/connectivity/directory/services",
	"/accounts/{account_id}/connectivity/directory/services/{service_id}",
	"/zones",
	"/zones/{zone_id}/dns_records",
	"/zones/{zone_id}/dns_records/{dns_record_id}",
	"/zones/{zone_id}/dns_records/batch",
	"/accounts/{account_id}/teamnet/routes",
	"/accounts/{account_id}/teamnet/routes/{route_id}",
	"/accounts/{account_id}/teamnet/routes/ip/{ip}",
	"/accounts/{account_id}/teamnet/virtual_networks",
	"/accounts/{account_id}/teamnet/virtual_networks/{virtual_network_id}",
	// Cloudflare Access: the document serves applications, groups, the
	// organization and service tokens at account-or-zone paths; the
	// simulator serves their account form.
	"/{accounts_or_zones}/{account_or_zone_id}/access/organizations",
	"/accounts/{account_id}/access/policies",
	"/accounts/{account_id}/access/policies/{policy_id}",
	"/{accounts_or_zones}/{account_or_zone_id}/access/groups",
	"/{accounts_or_zones}/{account_or_zone_id}/access/groups/{group_id}",
	"/{accounts_or_zones}/{account_or_zone_id}/access/apps",
	"/{accounts_or_zones}/{account_or_zone_id}/access/apps/{app_id}",
	"/{accounts_or_zones}/{account_or_zone_id}/access/service_tokens",
	"/{accounts_or_zones}/{account_or_zone_id}/access/service_tokens/{service_token_id}",
	"/accounts/{account_id}/access/service_tokens/{service_token_id}/rotate",
	"/accounts/{account_id}/access/service_tokens/{service_token_id}/refresh",
	// Load Balancing: monitors and pools are account-scoped; load
	// balancers are served at account-or-zone paths, the simulator serves
	// their zone form.
	"/accounts/{account_id}/load_balancers/monitors",
	"/accounts/{account_id}/load_balancers/monitors/{monitor_id}",
	"/accounts/{account_id}/load_balancers/pools",
	"/accounts/{account_id}/load_balancers/pools/{pool_id}",
	"/accounts/{account_id}/load_balancers/pools/{pool_id}/health",
	"/{accounts_or_zones}/{account_or_zone_id}/load_balancers",
	"/{accounts_or_zones}/{account_or_zone_id}/load_balancers/{load_balancer_id}",
}

// Validator checks requests and responses against Cloudflare's OpenAPI document.
type Validator struct {
	router routers.Router
	opts   *openapi3filter.Options
}

var (
	loadOnce sync.Once
	loaded   *Validator
	errLoad  error
)

// Load returns the process-wide Validator; the document is parsed only once
// because it is 12.5 MB of JSON.
func Load() (*Validator, error) {
	loadOnce.Do(func() { loaded, errLoad = load() })
	return loaded, errLoad
}

func load() (*Validator, error) {
	raw, err := readEmbeddedSpec()
	if err != nil {
		return nil, err
	}
	filtered, err := keepPaths(raw, usedPaths)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(filtered)
	if err != nil {
		return nil, fmt.Errorf("contract: loading OpenAPI document: %w", err)
	}
	if err := patchKnownQuirks(doc); err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("contract: building router: %w", err)
	}
	return &Validator{router: router, opts: &openapi3filter.Options{
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		MultiError:         true,
		// Defaults would be written into our copy of the request; pointless.
		SkipSettingDefaults:   true,
		IncludeResponseStatus: true,
	}}, nil
}

// keepPaths drops every path not in keep, every component those paths do
// not reach through $ref, and all servers (so the router matches on the path
// alone, whatever host the fake listens on). Pruning the raw JSON before
// kin-openapi sees it cuts loading from ~9 s (whole document) or ~2 s (all
// components kept) to well under a second.
func keepPaths(raw []byte, keep []string) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("contract: parsing OpenAPI document: %w", err)
	}
	var paths map[string]json.RawMessage
	var comps map[string]map[string]json.RawMessage
	if err := json.Unmarshal(top["paths"], &paths); err != nil {
		return nil, fmt.Errorf("contract: parsing paths: %w", err)
	}
	if err := json.Unmarshal(top["components"], &comps); err != nil {
		return nil, fmt.Errorf("contract: parsing components: %w", err)
	}
	keptPaths := make(map[string]json.RawMessage, len(keep))
	var todo []json.RawMessage
	for _, p := range keep {
		item, ok := paths[p]
		if !ok {
			return nil, fmt.Errorf("contract: path %s is not in the OpenAPI document", p)
		}
		keptPaths[p] = item
		todo = append(todo, item)
	}
	// Security schemes are named by security requirements, not by $ref.
	keptComps := map[string]map[string]json.RawMessage{"securitySchemes": comps["securitySchemes"]}
	for len(todo) > 0 {
		next := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, m := range componentRef.FindAllSubmatch(next, -1) {
			kind, name := string(m[1]), string(m[2])
			if _, done := keptComps[kind][name]; done {
				continue
			}
			c, ok := comps[kind][name]
			if !ok {
				return nil, fmt.Errorf("contract: unresolved $ref #/components/%s/%s", kind, name)
			}
			if keptComps[kind] == nil {
				keptComps[kind] = map[string]json.RawMessage{}
			}
			keptComps[kind][name] = c
			todo = append(todo, c)
		}
	}
	var err error
	if top["paths"], err = json.Marshal(keptPaths); err != nil {
		return nil, err
	}
	if top["components"], err = json.Marshal(keptComps); err != nil {
		return nil, err
	}
	delete(top, "servers")
	return json.Marshal(top)
}

var componentRef = regexp.MustCompile(`"\$ref"\s*:\s*"#/components/([^/"]+)/([^/"]+)"`)

func patchKnownQuirks(doc *openapi3.T) error {
	schemas := doc.Components.Schemas
	get := func(name string) (*openapi3.Schema, error) {
		ref, ok := schemas[name]
		if !ok || ref.Value == nil {
			return nil, fmt.Errorf("contract: schema %s missing; revisit patchKnownQuirks", name)
		}
		return ref.Value, nil
	}
	ingress, err := get("tunnel_ingressRule")
	if err != nil {
		return err
	}
	ingress.Required = []string{"service"}
	for _, name := range []string{"tunnel_deleted_at", "tunnel_conns_active_at", "tunnel_conns_inactive_at"} {
		s, err := get(name)
		if err != nil {
			return err
		}
		s.Nullable = true
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			r := op.Responses.Value("4XX")
			if r == nil || r.Value == nil {
				continue
			}
			mt := r.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			res := mt.Schema.Value.Properties["result"]
			if res != nil && res.Value != nil && len(res.Value.Enum) == 1 && res.Value.Enum[0] == nil {
				res.Value.Nullable = true
			}
		}
	}
	return nil
}

// readEmbeddedSpec decodes `EMBEDDED_SPEC="<base64 of gzip>"` from the SDK's
// scripts/mock.
func readEmbeddedSpec() ([]byte, error) {
	dir, err := sdkDir()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "scripts", "mock"))
	if err != nil {
		return nil, fmt.Errorf("contract: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20) // the variable is a single 1.5 MB line
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		b64, ok := strings.CutPrefix(line, `EMBEDDED_SPEC="`)
		if !ok {
			continue
		}
		gz, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(b64, `"`))
		if err != nil {
			return nil, fmt.Errorf("contract: decoding EMBEDDED_SPEC: %w", err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			return nil, fmt.Errorf("contract: EMBEDDED_SPEC: %w", err)
		}
		return io.ReadAll(zr)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("contract: reading %s: %w", f.Name(), err)
	}
	return nil, fmt.Errorf("contract: no EMBEDDED_SPEC in %s", f.Name())
}

// sdkDir asks the go command from the repository root, so that the version
// pinned in go.mod is used; the fallback covers `go list` failing (e.g. a
// test binary run outside the module).
func sdkDir() (string, error) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			root = ""
			break
		}
		root = parent
	}
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", sdkModule)
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
		return string(bytes.TrimSpace(out)), nil
	}
	cache := os.Getenv("GOMODCACHE")
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); cache == "" && err == nil {
		cache = string(bytes.TrimSpace(out))
	}
	dir := filepath.Join(cache, sdkModule+"@"+sdkVersion)
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("contract: cannot locate %s (run `go mod download`): %w", sdkModule, err)
	}
	return dir, nil
}

// input finds the operation for req. The request is copied onto a bare URL
// with the optional /client/v4 prefix removed, because the SDK may be pointed
// at either form of base URL.
func (v *Validator) input(req *http.Request, body []byte) (*openapi3filter.RequestValidationInput, error) {
	p := req.URL.EscapedPath()
	if rest, ok := strings.CutPrefix(p, basePrefix); ok && (rest == "" || rest[0] == '/') {
		p = rest
	}
	u := &url.URL{Scheme: "http", Host: "localhost", RawQuery: req.URL.RawQuery}
	var err error
	if u.Path, err = url.PathUnescape(p); err != nil {
		return nil, fmt.Errorf("%s %s: bad path: %w", req.Method, req.URL.Path, err)
	}
	u.RawPath = p
	r := req.Clone(context.Background())
	r.URL, r.Host, r.RequestURI = u, u.Host, ""
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	route, params, err := v.router.FindRoute(r)
	if err != nil {
		return nil, &unknownRouteError{fmt.Errorf("%s %s: unknown route: %w", req.Method, req.URL.Path, err)}
	}
	return &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: v.opts}, nil
}

// unknownRouteError lets Transport report a missing route once, not twice.
type unknownRouteError struct{ error }

func (e *unknownRouteError) Unwrap() error { return e.error }

// ValidateRequest checks path parameters, query parameters and the JSON body.
func (v *Validator) ValidateRequest(req *http.Request, body []byte) error {
	in, err := v.input(req, body)
	if err != nil {
		return err
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s: request: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// ValidateResponse checks status and body against the operation's response
// for that status ("200", or the "4XX" range).
func (v *Validator) ValidateResponse(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	in, err := v.input(req, reqBody)
	if err != nil {
		return err
	}
	if status >= 500 {
		return nil
	}
	// A status whose response declares no content (e.g. 200 of DELETE
	// connectivity service) passes with any body, including none; where
	// content is declared, an empty or non-JSON body is a violation.
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                v.opts,
	})
	if err != nil {
		return fmt.Errorf("%s %s: response %d: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}

// Transport wraps next; every request/response pair that goes through it is
// validated; violations are recorded, and the round trip itself still returns
// the real response (body restored).
type Transport struct {
	Next http.RoundTripper
	V    *Validator

	mu         sync.Mutex
	violations []string
}

// RoundTrip forwards the request and records any contract violation.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if reqBody, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		// RoundTrippers must not modify the caller's request.
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	if err := t.V.ValidateRequest(req, reqBody); err != nil {
		t.record(err)
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	err = t.V.ValidateResponse(req, reqBody, resp.StatusCode, resp.Header, body)
	var unknown *unknownRouteError
	if err != nil && !errors.As(err, &unknown) { // already recorded for the request
		t.record(err)
	}
	return resp, nil
}

func (t *Transport) record(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.violations = append(t.violations, err.Error())
}

// Violations returns a copy of the violations recorded so far.
func (t *Transport) Violations() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.violations...)
}

// NewTransport returns a Transport and registers t.Cleanup that fails the
// test (t.Errorf listing each violation) if any were recorded.
func NewTransport(t testing.TB, next http.RoundTripper) *Transport {
	t.Helper()
	v, err := Load()
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	tr := &Transport{Next: next, V: v}
	t.Cleanup(func() {
		for _, v := range tr.Violations() {
			t.Errorf("Cloudflare API contract violation: %s", v)
		}
	})
	return tr
}
