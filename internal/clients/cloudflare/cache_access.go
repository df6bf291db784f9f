package cloudflare

import (
	"context"
	"time"
)

// Access applications and reusable policies are observed like every other
// kind: one paginated list per kind refreshes every resource of it at most
// once per TTL, so 1,000 protected hostnames cost a list of 1,000
// applications per half poll instead of 1,000 gets.

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
	return cachedGet(ctx, &c.cache.accessApps, c.ttl, id, "cannot get Access application", c.accessAppList, c.Client.GetAccessApplication)
}

// ListAccessApplications lists now: it is asked only to find what a create
// of unknown outcome left, or who holds a hostname a create was refused
// for, and both must see objects newer than the snapshot. The list
// refreshes the snapshot too.
func (c *CachedClient) ListAccessApplications(ctx context.Context) ([]AccessApplication, error) {
	all, err := c.cache.accessApps.since(ctx, time.Now(), c.accessAppList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(AccessApplication) bool { return true }), nil
}

// CreateAccessApplication creates and records the application.
func (c *CachedClient) CreateAccessApplication(ctx context.Context, in AccessApplicationInput) (*AccessApplication, error) {
	a, err := c.Client.CreateAccessApplication(ctx, in)
	afterWrite(&c.cache.accessApps, err, idOf(a, func(a *AccessApplication) string { return a.ID }), a)
	return a, err
}

// UpdateAccessApplication updates and records the application.
func (c *CachedClient) UpdateAccessApplication(ctx context.Context, id string, in AccessApplicationInput) (*AccessApplication, error) {
	a, err := c.Client.UpdateAccessApplication(ctx, id, in)
	afterWrite(&c.cache.accessApps, err, id, a)
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
	return cachedGet(ctx, &c.cache.accessPolicies, c.ttl, id, "cannot get Access policy", c.accessPolicyList, c.Client.GetAccessPolicy)
}

// ListAccessPolicies lists now, as ListAccessApplications does.
func (c *CachedClient) ListAccessPolicies(ctx context.Context) ([]AccessPolicy, error) {
	all, err := c.cache.accessPolicies.since(ctx, time.Now(), c.accessPolicyList)
	if err != nil {
		return nil, err
	}
	return sortedValues(all, func(AccessPolicy) bool { return true }), nil
}

// CreateAccessPolicy creates and records the policy.
func (c *CachedClient) CreateAccessPolicy(ctx context.Context, in AccessPolicyInput) (*AccessPolicy, error) {
	p, err := c.Client.CreateAccessPolicy(ctx, in)
	afterWrite(&c.cache.accessPolicies, err, idOf(p, func(p *AccessPolicy) string { return p.ID }), p)
	return p, err
}

// UpdateAccessPolicy updates and records the policy.
func (c *CachedClient) UpdateAccessPolicy(ctx context.Context, id string, in AccessPolicyInput) (*AccessPolicy, error) {
	p, err := c.Client.UpdateAccessPolicy(ctx, id, in)
	afterWrite(&c.cache.accessPolicies, err, id, p)
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

// GetAccessOrganization serves the account's Access organization read
// within the TTL: every new application asks for its team domain, which
// does not change with the number of applications.
func (c *CachedClient) GetAccessOrganization(ctx context.Context) (*AccessOrganization, error) {
	const key = "organization"
	o, _, err := c.cache.accessOrg.get(ctx, c.ttl, key, func(ctx context.Context) (map[string]AccessOrganization, error) {
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
