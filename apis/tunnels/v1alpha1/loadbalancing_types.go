package v1alpha1

import xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

// LoadBalancing puts a PublicHostname's hostname behind a Cloudflare load
// balancer (Load Balancing, a paid add-on of the account), so that several
// clusters serve it, each through its own tunnel. Every cluster's
// PublicHostname for the hostname names its own pool: the cluster publishes
// the hostname's rules on its tunnel as without load balancing, and makes
// its pool (its tunnel as the one origin, the hostname as Host header) and
// the pool's monitor, but no DNS record: the load balancer holds the name.
// Exactly one cluster's PublicHostname also sets loadBalancer, and makes the
// load balancer, which lists the pools by name, each only with proof that
// it serves this hostname (see docs/multi-cluster-failover.md).
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancer) || self.pool in self.loadBalancer.pools",message="loadBalancer.pools must list this cluster's own pool (spec.loadBalancing.pool)"
type LoadBalancing struct {
	// Pool is the name of this cluster's pool in Cloudflare, unique in the
	// account, e.g. "app-eu-west". A pool of that name this cluster did not
	// make is never taken over: the PublicHostname is refused instead.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+$`
	Pool string `json:"pool"`

	// Monitor says how Cloudflare probes this cluster's tunnel for the
	// hostname. By default it requests "/" of the hostname through the
	// tunnel, so an application that does not answer fails over, not only
	// a stopped cloudflared.
	// +optional
	Monitor *HostnameMonitor `json:"monitor,omitempty"`

	// LoadBalancer, set in exactly one cluster's PublicHostname for the
	// hostname, makes the load balancer in this cluster.
	// +optional
	LoadBalancer *HostnameLoadBalancer `json:"loadBalancer,omitempty"`
}

// HostnameMonitor is the probe of a load-balanced hostname's pool. It is
// sent to the tunnel with the hostname as Host header, so the tunnel's rule
// for the hostname routes it.
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || !has(self.timeout) || self.timeout < self.interval",message="timeout must be shorter than interval"
type HostnameMonitor struct {
	// Type of the probe: https (default) or http. Cloudflare documents
	// that TCP monitors do not work on tunnel origins.
	// +optional
	// +kubebuilder:validation:Enum=http;https
	Type *string `json:"type,omitempty"`

	// Path the probe requests; default "/".
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path *string `json:"path,omitempty"`

	// ExpectedCodes of a healthy answer: a code or a range such as "2xx";
	// default "200".
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-5]([0-9]{2}|xx)$`
	ExpectedCodes *string `json:"expectedCodes,omitempty"`

	// Interval between probes in seconds; default 60.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	Interval *int64 `json:"interval,omitempty"`

	// Timeout of one probe in seconds; default 5.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Timeout *int64 `json:"timeout,omitempty"`

	// Retries after a timeout before the origin is unhealthy; default 2.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	Retries *int64 `json:"retries,omitempty"`

	// ConnectorOnly makes the probe's path (which must then be set) an
	// http_status:200 rule of the hostname, answered by cloudflared
	// itself: the pool is then healthy while the tunnel has connectors,
	// whether the application answers or not. Off by default.
	// +optional
	ConnectorOnly bool `json:"connectorOnly,omitempty"`
}

// HostnameLoadBalancer is the load balancer of a load-balanced hostname.
// +kubebuilder:validation:XValidation:rule="!has(self.fallbackPool) || self.fallbackPool in self.pools",message="fallbackPool must be one of pools"
type HostnameLoadBalancer struct {
	// Pools by their name in Cloudflare, in failover order: this
	// cluster's own (spec.loadBalancing.pool) and the pools other
	// clusters' PublicHostnames make for the same hostname. A pool is
	// listed only with proof that it serves this hostname; one without is
	// left out, and the LoadBalanced condition names it.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=100
	// +listType=set
	Pools []string `json:"pools"`

	// FallbackPool serves when no pool is healthy; default the last of
	// pools.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	FallbackPool *string `json:"fallbackPool,omitempty"`

	// SteeringPolicy: off (default: the first healthy pool, failover),
	// random, dynamic_latency, proximity, least_outstanding_requests or
	// least_connections.
	// +optional
	// +kubebuilder:validation:Enum=off;random;dynamic_latency;proximity;least_outstanding_requests;least_connections
	SteeringPolicy *string `json:"steeringPolicy,omitempty"`

	// SessionAffinity keeps a client on one origin: none (default),
	// cookie, ip_cookie or header.
	// +optional
	// +kubebuilder:validation:Enum=none;cookie;ip_cookie;header
	SessionAffinity *string `json:"sessionAffinity,omitempty"`
}

// LoadBalancingStatus names what a load-balanced PublicHostname made and
// how its pool is.
type LoadBalancingStatus struct {
	// Pool is the LoadBalancerPool made for the hostname, and PoolID its
	// Cloudflare ID once made.
	Pool   string `json:"pool,omitempty"`
	PoolID string `json:"poolID,omitempty"`
	// Monitor is the LoadBalancerMonitor made for the pool.
	Monitor string `json:"monitor,omitempty"`
	// LoadBalancer is the LoadBalancer made, when spec.loadBalancing sets
	// loadBalancer.
	LoadBalancer string `json:"loadBalancer,omitempty"`
	// PoolHealth is the pool's health as its LoadBalancerPool reports it:
	// Healthy, Unhealthy, or Unknown until it reports one.
	PoolHealth string `json:"poolHealth,omitempty"`
}

// TypeLoadBalanced (a load-balanced PublicHostname): its pool is made and,
// where it holds the load balancer, the load balancer is made with every
// pool it names proven.
const TypeLoadBalanced xpv2.ConditionType = "LoadBalanced"

// Reasons of LoadBalanced.
const (
	// ReasonLoadBalanced: everything asked for is made.
	ReasonLoadBalanced xpv2.ConditionReason = "LoadBalanced"
	// ReasonWaitingForPool: the pool (or its monitor) is not made yet.
	ReasonWaitingForPool xpv2.ConditionReason = "WaitingForPool"
	// ReasonWaitingForLoadBalancer: the load balancer is not made yet.
	ReasonWaitingForLoadBalancer xpv2.ConditionReason = "WaitingForLoadBalancer"
	// ReasonPoolRefused: the pool or its monitor was refused (its name is
	// another's, a guardrail); the managed resource's message says which.
	ReasonPoolRefused xpv2.ConditionReason = "PoolRefused"
	// ReasonLoadBalancerRefused: the load balancer was refused, e.g. a DNS
	// record or load balancer of the hostname that this installation did
	// not make holds the name; it is never replaced.
	ReasonLoadBalancerRefused xpv2.ConditionReason = "LoadBalancerRefused"
	// ReasonPoolNotProven: a pool the load balancer names has no proof
	// that it serves the hostname, and is not listed.
	ReasonPoolNotProven xpv2.ConditionReason = "PoolNotProven"
	// ReasonChildNameTaken: an object of the name the PublicHostname
	// would give its pool, monitor or load balancer exists and is not
	// its own; it is left alone.
	ReasonChildNameTaken xpv2.ConditionReason = "ChildNameTaken"
)
