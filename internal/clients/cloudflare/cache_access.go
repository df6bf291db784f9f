package cloudflare

import (
	"context"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/cloudflare/budget"
)

// Access applications, reusable policies, groups and service tokens are
// observed like every other kind: one paginated list per kind refreshes
// every resource of it at most once per TTL, so 1,000 protected hostnames
// cost a list of 1,000 applications per half poll instead of 1,000 gets.

func (c *CachedClient) accessAppList(ctx context.Context) (map[string]AccessApplication, error) {
	as, err := c.Client.ListAccessApplications(ctx)
	return collectByID(as, func(a AccessApplication) string { return a.ID }), err
}

func (c *CachedClient) accessPolicyList(ctx context.Context) (map[string]AccessPolicy, error) {
	ps, err := c.Client.ListAccessPolicies(ctx)
	return collectByID(ps, func(p AccessPolicy) string { return p.ID }), err
}

// cachedGet serves a live object from s; a miss (an object newer than the
// snapshot, or gone) is confirmed with get.
func cachedGet[T any](ctx context.Context, s *snapshot[T], ttl time.Duration, id, op string, list func(context.Context) (map[string]T, error), get func(context.Context, string) (*T, error)) (*T, error) {
	if s.deleted(id) {
		return nil, goneError(op)
	}
	v, ok, err := s.get(ctx, ttl, id, list)
	if err != nil {
		return nil, err
	}
	if ok {
		return &v, nil
	}
	got, err := get(ctx, id)
	if err == nil {
		s.put(id, *got)
	}
	return got, err
}

// GetAccessApplication serves an application from the snapshot.
func (c *CachedClient) GetAccessApplication(ctx context.Context, id string) (*AccessApplication, error) {
	return cachedGet(ctx, &c.cache.accessApps, c.observeTTL(), id, "cannot get Access application", c.accessAppList, c.Client.GetAccessApplication)
}

// ListAccessApplications lists now, or answers from a list sent after the
// time ListedAfter put in ctx: it is asked only to find what a create of
// unknown outcome left, or who holds a hostname a create was refused for,
// and both must see objects newer than the snapshot. The list refreshes
// the snapshot too.
func (c *CachedClient) ListAccessApplications(ctx context.Context) ([]AccessApplication, error) {
	all, err := c.cache.accessApps.since(ctx, listedAfter(ctx), c.accessAppList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(AccessApplication) bool { return true }), nil
}

// CreateAccessApplication creates and records the application.
func (c *CachedClient) CreateAccessApplication(ctx context.Context, in AccessApplicationInput) (*AccessApplication, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	a, err := c.Client.CreateAccessApplication(ctx, in)
	afterWrite(&c.cache.accessApps, err, sent, idOf(a, func(a *AccessApplication) string { return a.ID }), a)
	return a, err
}

// UpdateAccessApplication updates and records the application.
func (c *CachedClient) UpdateAccessApplication(ctx context.Context, id string, in AccessApplicationInput) (*AccessApplication, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	a, err := c.Client.UpdateAccessApplication(ctx, id, in)
	afterWrite(&c.cache.accessApps, err, sent, id, a)
	return a, err
}

// DeleteAccessApplication deletes and forgets the application.
func (c *CachedClient) DeleteAccessApplication(ctx context.Context, id string) error {
	err := c.Client.DeleteAccessApplication(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.accessApps.remove(id)
	}
	return err
}

// GetAccessPolicy serves a policy from the snapshot.
func (c *CachedClient) GetAccessPolicy(ctx context.Context, id string) (*AccessPolicy, error) {
	return cachedGet(ctx, &c.cache.accessPolicies, c.observeTTL(), id, "cannot get Access policy", c.accessPolicyList, c.Client.GetAccessPolicy)
}

// ListAccessPolicies lists now, as ListAccessApplications does.
func (c *CachedClient) ListAccessPolicies(ctx context.Context) ([]AccessPolicy, error) {
	all, err := c.cache.accessPolicies.since(ctx, listedAfter(ctx), c.accessPolicyList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(AccessPolicy) bool { return true }), nil
}

// CreateAccessPolicy creates and records the policy.
func (c *CachedClient) CreateAccessPolicy(ctx context.Context, in AccessPolicyInput) (*AccessPolicy, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	p, err := c.Client.CreateAccessPolicy(ctx, in)
	afterWrite(&c.cache.accessPolicies, err, sent, idOf(p, func(p *AccessPolicy) string { return p.ID }), p)
	return p, err
}

// UpdateAccessPolicy updates and records the policy.
func (c *CachedClient) UpdateAccessPolicy(ctx context.Context, id string, in AccessPolicyInput) (*AccessPolicy, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	p, err := c.Client.UpdateAccessPolicy(ctx, id, in)
	afterWrite(&c.cache.accessPolicies, err, sent, id, p)
	return p, err
}

// DeleteAccessPolicy deletes and forgets the policy.
func (c *CachedClient) DeleteAccessPolicy(ctx context.Context, id string) error {
	err := c.Client.DeleteAccessPolicy(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.accessPolicies.remove(id)
	}
	return err
}

func (c *CachedClient) accessGroupList(ctx context.Context) (map[string]AccessGroup, error) {
	gs, err := c.Client.ListAccessGroups(ctx)
	return collectByID(gs, func(g AccessGroup) string { return g.ID }), err
}

func (c *CachedClient) serviceTokenList(ctx context.Context) (map[string]ServiceToken, error) {
	ts, err := c.Client.ListServiceTokens(ctx)
	return collectByID(ts, func(t ServiceToken) string { return t.ID }), err
}

// GetAccessGroup serves a group from the snapshot.
func (c *CachedClient) GetAccessGroup(ctx context.Context, id string) (*AccessGroup, error) {
	return cachedGet(ctx, &c.cache.accessGroups, c.observeTTL(), id, "cannot get Access group", c.accessGroupList, c.Client.GetAccessGroup)
}

// ListAccessGroups lists now, as ListAccessApplications does.
func (c *CachedClient) ListAccessGroups(ctx context.Context) ([]AccessGroup, error) {
	all, err := c.cache.accessGroups.since(ctx, listedAfter(ctx), c.accessGroupList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(AccessGroup) bool { return true }), nil
}

// CreateAccessGroup creates and records the group.
func (c *CachedClient) CreateAccessGroup(ctx context.Context, in AccessGroupInput) (*AccessGroup, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	g, err := c.Client.CreateAccessGroup(ctx, in)
	afterWrite(&c.cache.accessGroups, err, sent, idOf(g, func(g *AccessGroup) string { return g.ID }), g)
	return g, err
}

// UpdateAccessGroup updates and records the group.
func (c *CachedClient) UpdateAccessGroup(ctx context.Context, id string, in AccessGroupInput) (*AccessGroup, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	g, err := c.Client.UpdateAccessGroup(ctx, id, in)
	afterWrite(&c.cache.accessGroups, err, sent, id, g)
	return g, err
}

// DeleteAccessGroup deletes and forgets the group.
func (c *CachedClient) DeleteAccessGroup(ctx context.Context, id string) error {
	err := c.Client.DeleteAccessGroup(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.accessGroups.remove(id)
	}
	return err
}

// GetServiceToken serves a token (never its secret) from the snapshot.
func (c *CachedClient) GetServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	return cachedGet(ctx, &c.cache.serviceTokens, c.observeTTL(), id, "cannot get Access service token", c.serviceTokenList, c.Client.GetServiceToken)
}

// ListServiceTokens lists now, as ListAccessApplications does.
func (c *CachedClient) ListServiceTokens(ctx context.Context) ([]ServiceToken, error) {
	all, err := c.cache.serviceTokens.since(ctx, listedAfter(ctx), c.serviceTokenList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(ServiceToken) bool { return true }), nil
}

// issued records a token from an answer that carried its secret; the
// snapshot keeps the token only, as Cloudflare lists it.
func (c *CachedClient) issued(err error, id string, t *IssuedServiceToken) {
	var listed *ServiceToken
	if t != nil {
		listed = &t.ServiceToken
	}
	afterWrite(&c.cache.serviceTokens, err, nil, id, listed)
}

// CreateServiceToken creates and records the token.
func (c *CachedClient) CreateServiceToken(ctx context.Context, in ServiceTokenInput) (*IssuedServiceToken, error) {
	t, err := c.Client.CreateServiceToken(ctx, in)
	c.issued(err, idOf(t, func(t *IssuedServiceToken) string { return t.ID }), t)
	return t, err
}

// UpdateServiceToken updates and records the token.
func (c *CachedClient) UpdateServiceToken(ctx context.Context, id string, in ServiceTokenInput) (*ServiceToken, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	t, err := c.Client.UpdateServiceToken(ctx, id, in)
	afterWrite(&c.cache.serviceTokens, err, sent, id, t)
	return t, err
}

// RotateServiceToken rotates and records the token.
func (c *CachedClient) RotateServiceToken(ctx context.Context, id string, previousExpiresAt *time.Time) (*IssuedServiceToken, error) {
	t, err := c.Client.RotateServiceToken(ctx, id, previousExpiresAt)
	c.issued(err, id, t)
	return t, err
}

// RefreshServiceToken refreshes and records the token.
func (c *CachedClient) RefreshServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	ctx, sent := budget.WithSendRecord(ctx)
	t, err := c.Client.RefreshServiceToken(ctx, id)
	afterWrite(&c.cache.serviceTokens, err, sent, id, t)
	return t, err
}

// DeleteServiceToken deletes and forgets the token.
func (c *CachedClient) DeleteServiceToken(ctx context.Context, id string) error {
	err := c.Client.DeleteServiceToken(ctx, id)
	if err == nil || IsNotFound(err) {
		c.cache.serviceTokens.remove(id)
	}
	return err
}

// OrganizationTTL is how long the account's Access organization is served
// from one read. Every new application asks for its team domain, which an
// account sets once: at a half-poll TTL, 1,000 new applications over 20
// minutes read it 32 times (1% of their requests); an application keeps
// the domain it read in its status.
const OrganizationTTL = 10 * time.Minute

// GetAccessOrganization serves the account's Access organization read
// within OrganizationTTL (or the observation TTL, when longer).
func (c *CachedClient) GetAccessOrganization(ctx context.Context) (*AccessOrganization, error) {
	const key = "organization"
	o, _, err := c.cache.accessOrg.get(ctx, max(c.observeTTL(), OrganizationTTL), key, func(ctx context.Context) (map[string]AccessOrganization, error) {
		o, err := c.Client.GetAccessOrganization(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]AccessOrganization{key: *o}, nil
	})
	if err != nil {
		return nil, err
	}
	return &o, nil
}

type listedAfterKey struct{}

// ListedAfter lets the lists that otherwise always list anew (those that
// find what a create left) answer from a list sent at or after t: the
// moment after which a list shows whatever that create did. Resources
// whose creates ended close together then share one list.
func ListedAfter(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, listedAfterKey{}, t)
}

// listedAfter is the time ListedAfter gave, else now.
func listedAfter(ctx context.Context) time.Time {
	if t, ok := ctx.Value(listedAfterKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}
