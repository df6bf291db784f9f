package conformance

// skipped are the suite's tests skipped by name, each with the reason; the
// docs list them (docs/gateway-api.md, "Conformance"). A test is skipped
// here only when what it checks cannot be done through Cloudflare's edge
// and cloudflared, never to make a run pass.
var skipped = map[string]string{}

func skippedNames() []string {
	out := make([]string, 0, len(skipped))
	for name := range skipped {
		out = append(out, name)
	}
	return out
}
