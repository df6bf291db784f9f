package conformance

// skipped are the suite's tests skipped by name, each with the reason; the
// docs list them (docs/gateway-api.md, "Conformance"). A test is skipped
// here only when what it checks cannot be done through Cloudflare's edge
// and cloudflared, never to make a run pass: what this provider could do
// and does not is a failure, reported as one.
var skipped = map[string]string{
	"HTTPRouteHeaderMatching":       headerMatches,
	"HTTPRouteMatching":             headerMatches,
	"HTTPRouteMatchingAcrossRoutes": headerMatches,
	"HTTPRouteRedirectHostAndStatus": "a RequestRedirect filter: cloudflared answers a request only by proxying it to the rule's origin " +
		"or with a fixed http_status, never a redirect (Cloudflare's Redirect Rules are a zone setting outside the tunnel)",
	"HTTPRouteRequestHeaderModifier": "a RequestHeaderModifier filter: cloudflared sets only an origin's Host header " +
		"(originRequest.httpHostHeader), never other request headers",
	"HTTPRouteWeight":                   "weighted backends: a cloudflared rule has one origin, so traffic cannot be split between backends",
	"HTTPRouteHostnameIntersection":     unpublishedHostnames,
	"HTTPRouteListenerHostnameMatching": unpublishedHostnames,
	"HTTPRouteHTTPSListener": "the listener's certificate: Cloudflare's edge terminates TLS with the zone's edge certificates, " +
		"never a certificate from the cluster, and the simulated edge serves plain HTTP",
}

// unpublishedHostnames: every request these tests route is routed; what
// cannot be met is their 404 for a hostname the Gateway does not publish.
// No DNS record leads such a name to the tunnel, so Cloudflare's edge
// answers it (error 1001, HTTP 530) before any tunnel sees it, and a name
// outside the account's zones never reaches Cloudflare at all.
const unpublishedHostnames = "a 404 for a hostname the Gateway does not publish: Cloudflare's edge answers a name no DNS record " +
	"leads to a tunnel with error 1001 (HTTP 530) before any tunnel sees the request"

const headerMatches = "header matches: cloudflared chooses a rule by the request's hostname and path only"

func skippedNames() []string {
	out := make([]string, 0, len(skipped))
	for name := range skipped {
		out = append(out, name)
	}
	return out
}
