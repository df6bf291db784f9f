package origin

import "fmt"

// Lead is where a Service sends what reaches its cluster DNS name, as the
// caller read it.
type Lead struct {
	// ExternalName of a Service of type ExternalName: cluster DNS answers
	// its name with a CNAME to it.
	ExternalName string
	// Addresses of endpoints written by hand (EndpointSlices of a Service
	// without a selector, or not made by the endpoint controller): IP
	// addresses, or names in an FQDN slice. The endpoint controller's own
	// are its Pods' addresses, which need no judging.
	Addresses []string
	// Pods are the addresses of the Service's namespace's own Pods. A
	// hand-made endpoint at one of them leads where the namespace can
	// publish anyway, through a Service selecting that Pod, so only the
	// refusal no entry lifts (a metadata address) applies to it: endpoints
	// written by hand for a Pod (Gateway API's conformance suite routes
	// to such Services) are published like a selector's.
	Pods map[string]bool
}

// Lookup reads where Service namespace/name leads. A Service that does not
// exist leads nowhere: the zero Lead.
type Lookup func(namespace, name string) (Lead, error)

// MaxHops is how many Services Follow follows from one origin; a longer
// chain, or a loop, is refused as unreadable.
const MaxHops = 8

// Follow is Check, and then the same judgement of where each Service the
// origin names leads, because that is where cloudflared's requests go: an
// ExternalName Service's name is judged as if it were the origin's host
// (and followed if it names a Service in turn), and each endpoint address
// written by hand as an origin of that address. So a Service leading to a
// metadata address is refused whatever is listed, and one leading
// elsewhere passes only where spec.allow.origins lists where it leads.
// Only look's error is returned as an error.
func Follow(origin string, from Source, allowed []string, look Lookup) (*Refusal, error) {
	t, r := parse(origin)
	if r != nil {
		return r, nil
	}
	if r := check(origin, t, from, allowed); r != nil {
		return r, nil
	}
	f := follower{origin: origin, from: from, allowed: allowed, look: look}
	return f.follow(t.host, MaxHops)
}

type follower struct {
	origin  string
	from    Source
	allowed []string
	look    Lookup
}

// follow judges where the Service host names leads, if it names one.
func (f follower) follow(host string, hops int) (*Refusal, error) {
	svc, ok := serviceName(host, f.from.ClusterDomain)
	if !ok {
		return nil, nil
	}
	if hops == 0 {
		return &Refusal{Origin: f.origin, Rule: RuleUnreadable, Why: fmt.Sprintf("it leads through more than %d Services (or around a loop of ExternalName Services) before reaching an address; name the last one", MaxHops)}, nil
	}
	lead, err := f.look(svc.namespace, svc.name)
	if err != nil {
		return nil, err
	}
	if lead.ExternalName != "" {
		t, r := f.judge(svc, lead.ExternalName, "is an ExternalName Service for")
		if r != nil || t.host == "" {
			return r, nil
		}
		return f.follow(t.host, hops-1)
	}
	var first *Refusal
	for _, a := range lead.Addresses {
		t, r := f.judge(svc, a, "has an endpoint written by hand at")
		if r != nil && r.Rule != RuleMetadata && lead.Pods[a] {
			r = nil
		}
		if r == nil && t.host != "" {
			if r, err = f.follow(t.host, hops-1); err != nil {
				return nil, err
			}
		}
		if r != nil && r.Rule == RuleMetadata {
			return r, nil // the refusal that no entry lifts, said first
		}
		if first == nil {
			first = r
		}
	}
	return first, nil
}

// judge judges where a Service leads as an origin of that host, and says
// so in the refusal.
func (f follower) judge(svc service, host, how string) (target, *Refusal) {
	t, why := parseHost(host)
	var r *Refusal
	if why != "" {
		r = &Refusal{Rule: RuleUnreadable, Why: why}
	} else {
		r = check(host, t, f.from, f.allowed)
	}
	if r == nil {
		return t, nil
	}
	if f.from.Namespace != "" && svc.namespace != f.from.Namespace {
		// Another namespace's Service: what it leads to is that
		// namespace's to see, not this one's.
		return t, &Refusal{Origin: f.origin, Rule: r.Rule, Why: fmt.Sprintf("Service %s/%s leads where the guardrail refuses (%s)", svc.namespace, svc.name, r.Rule)}
	}
	return t, &Refusal{Origin: f.origin, Rule: r.Rule, Why: fmt.Sprintf("Service %s/%s %s %s, which is judged as the origin: %s", svc.namespace, svc.name, how, clip(host), r.Why)}
}
