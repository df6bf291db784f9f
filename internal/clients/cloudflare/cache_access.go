package cloudflare

import (
	"context"
	"time"
)

// Access applications, reusable policies, groups and service tokens are
// observed like every other kind: one paginated list per kind refreshes
// every resource of it at most once per TTL, so 1,000 protected hostnames
// cost a list of 1,000 applications per half poll instead of 1,000 gets.
//
// Their lists are asked only to find what a create of unknown outcome
// left, or who holds a name a create was refused for, and both must see
// objects newer than the snapshot: they list now, or answer from a list
// sent after the time ListedAfter put in ctx. The list refreshes the
// snapshot too.

var accessApplicationKind = kind[AccessApplication]{
	getOp: "cannot get Access application",
	id:    func(a *AccessApplication) string { return a.ID },
	list:  (*Client).ListAccessApplications,
	get:   (*Client).GetAccessApplication,
	// What a refused get names (AccessLostError).
	noun:       "Access application",
	permission: "Account › Access: Apps and Policies: Edit",
}

func (c *CachedClient) cachedAccessApplications() cached[AccessApplication] {
	return cached[AccessApplication]{c: c, s: &c.cache.accessApps, k: accessApplicationKind}
}

// GetAccessApplication serves an application from the snapshot.
func (c *CachedClient) GetAccessApplication(ctx context.Context, id string) (*AccessApplication, error) {
	return c.cachedAccessApplications().get(ctx, id)
}

// ListAccessApplications lists now, or answers from a list sent after the
// time ListedAfter put in ctx.
func (c *CachedClient) ListAccessApplications(ctx context.Context) ([]AccessApplication, error) {
	return c.cachedAccessApplications().listSince(ctx, listedAfter(ctx), nil)
}

// CreateAccessApplication creates and records the application.
func (c *CachedClient) CreateAccessApplication(ctx context.Context, in AccessApplicationInput) (*AccessApplication, error) {
	return create(ctx, c.cachedAccessApplications(), in, c.Client.CreateAccessApplication)
}

// UpdateAccessApplication updates and records the application.
func (c *CachedClient) UpdateAccessApplication(ctx context.Context, id string, in AccessApplicationInput) (*AccessApplication, error) {
	return update(ctx, c.cachedAccessApplications(), id, in, c.Client.UpdateAccessApplication)
}

// DeleteAccessApplication deletes and forgets the application.
func (c *CachedClient) DeleteAccessApplication(ctx context.Context, id string) error {
	return c.cachedAccessApplications().remove(ctx, id, c.Client.DeleteAccessApplication)
}

var accessPolicyKind = kind[AccessPolicy]{
	getOp: "cannot get Access policy",
	id:    func(p *AccessPolicy) string { return p.ID },
	list:  (*Client).ListAccessPolicies,
	get:   (*Client).GetAccessPolicy,
	// What a refused get names (AccessLostError).
	noun:       "Access policy",
	permission: "Account › Access: Apps and Policies: Edit",
}

func (c *CachedClient) cachedAccessPolicies() cached[AccessPolicy] {
	return cached[AccessPolicy]{c: c, s: &c.cache.accessPolicies, k: accessPolicyKind}
}

// GetAccessPolicy serves a policy from the snapshot.
func (c *CachedClient) GetAccessPolicy(ctx context.Context, id string) (*AccessPolicy, error) {
	return c.cachedAccessPolicies().get(ctx, id)
}

// ListAccessPolicies lists now, as ListAccessApplications does.
func (c *CachedClient) ListAccessPolicies(ctx context.Context) ([]AccessPolicy, error) {
	return c.cachedAccessPolicies().listSince(ctx, listedAfter(ctx), nil)
}

// CreateAccessPolicy creates and records the policy.
func (c *CachedClient) CreateAccessPolicy(ctx context.Context, in AccessPolicyInput) (*AccessPolicy, error) {
	return create(ctx, c.cachedAccessPolicies(), in, c.Client.CreateAccessPolicy)
}

// UpdateAccessPolicy updates and records the policy.
func (c *CachedClient) UpdateAccessPolicy(ctx context.Context, id string, in AccessPolicyInput) (*AccessPolicy, error) {
	return update(ctx, c.cachedAccessPolicies(), id, in, c.Client.UpdateAccessPolicy)
}

// DeleteAccessPolicy deletes and forgets the policy.
func (c *CachedClient) DeleteAccessPolicy(ctx context.Context, id string) error {
	return c.cachedAccessPolicies().remove(ctx, id, c.Client.DeleteAccessPolicy)
}

var accessGroupKind = kind[AccessGroup]{
	getOp: "cannot get Access group",
	id:    func(g *AccessGroup) string { return g.ID },
	list:  (*Client).ListAccessGroups,
	get:   (*Client).GetAccessGroup,
	// What a refused get names (AccessLostError).
	noun:       "Access group",
	permission: "Account › Access: Organizations, Identity Providers, and Groups: Edit",
}

func (c *CachedClient) cachedAccessGroups() cached[AccessGroup] {
	return cached[AccessGroup]{c: c, s: &c.cache.accessGroups, k: accessGroupKind}
}

// GetAccessGroup serves a group from the snapshot.
func (c *CachedClient) GetAccessGroup(ctx context.Context, id string) (*AccessGroup, error) {
	return c.cachedAccessGroups().get(ctx, id)
}

// ListAccessGroups lists now, as ListAccessApplications does.
func (c *CachedClient) ListAccessGroups(ctx context.Context) ([]AccessGroup, error) {
	return c.cachedAccessGroups().listSince(ctx, listedAfter(ctx), nil)
}

// CreateAccessGroup creates and records the group.
func (c *CachedClient) CreateAccessGroup(ctx context.Context, in AccessGroupInput) (*AccessGroup, error) {
	return create(ctx, c.cachedAccessGroups(), in, c.Client.CreateAccessGroup)
}

// UpdateAccessGroup updates and records the group.
func (c *CachedClient) UpdateAccessGroup(ctx context.Context, id string, in AccessGroupInput) (*AccessGroup, error) {
	return update(ctx, c.cachedAccessGroups(), id, in, c.Client.UpdateAccessGroup)
}

// DeleteAccessGroup deletes and forgets the group.
func (c *CachedClient) DeleteAccessGroup(ctx context.Context, id string) error {
	return c.cachedAccessGroups().remove(ctx, id, c.Client.DeleteAccessGroup)
}

var serviceTokenKind = kind[ServiceToken]{
	getOp: "cannot get Access service token",
	id:    func(t *ServiceToken) string { return t.ID },
	list:  (*Client).ListServiceTokens,
	get:   (*Client).GetServiceToken,
	// What a refused get names (AccessLostError).
	noun:       "Access service token",
	permission: "Account › Access: Service Tokens: Edit",
}

func (c *CachedClient) cachedServiceTokens() cached[ServiceToken] {
	return cached[ServiceToken]{c: c, s: &c.cache.serviceTokens, k: serviceTokenKind}
}

// GetServiceToken serves a token (never its secret) from the snapshot.
func (c *CachedClient) GetServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	return c.cachedServiceTokens().get(ctx, id)
}

// ListServiceTokens lists now, as ListAccessApplications does.
func (c *CachedClient) ListServiceTokens(ctx context.Context) ([]ServiceToken, error) {
	return c.cachedServiceTokens().listSince(ctx, listedAfter(ctx), nil)
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
	return update(ctx, c.cachedServiceTokens(), id, in, c.Client.UpdateServiceToken)
}

// RotateServiceToken rotates and records the token.
func (c *CachedClient) RotateServiceToken(ctx context.Context, id string, previousExpiresAt *time.Time) (*IssuedServiceToken, error) {
	t, err := c.Client.RotateServiceToken(ctx, id, previousExpiresAt)
	c.issued(err, id, t)
	return t, err
}

// RefreshServiceToken refreshes and records the token.
func (c *CachedClient) RefreshServiceToken(ctx context.Context, id string) (*ServiceToken, error) {
	return c.cachedServiceTokens().write(ctx, id, func(ctx context.Context) (*ServiceToken, error) {
		return c.Client.RefreshServiceToken(ctx, id)
	})
}

// DeleteServiceToken deletes and forgets the token.
func (c *CachedClient) DeleteServiceToken(ctx context.Context, id string) error {
	return c.cachedServiceTokens().remove(ctx, id, c.Client.DeleteServiceToken)
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
