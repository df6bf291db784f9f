package sim

import (
	"net/http"
	"net/netip"
	"strings"
	"time"
)

type cidrRoute struct {
	ID               string     `json:"id"`
	Network          string     `json:"network"`
	TunnelID         string     `json:"tunnel_id"`
	VirtualNetworkID string     `json:"virtual_network_id"`
	Comment          string     `json:"comment"`
	CreatedAt        time.Time  `json:"created_at"`
	DeletedAt        *time.Time `json:"deleted_at"`
}

// cidrRouteView is the list shape (tunnel_teamnet), which adds names.
type cidrRouteView struct {
	*cidrRoute
	TunType            string `json:"tun_type"`
	TunnelName         string `json:"tunnel_name"`
	VirtualNetworkName string `json:"virtual_network_name"`
}

type vnet struct {
	ID               string     `json:"id"`
	Name             string     `json:"name"`
	Comment          string     `json:"comment"`
	IsDefaultNetwork bool       `json:"is_default_network"`
	CreatedAt        time.Time  `json:"created_at"`
	DeletedAt        *time.Time `json:"deleted_at"`
}

func (s *Server) defaultVNet() *vnet {
	for _, v := range s.vnets {
		if v.IsDefaultNetwork && v.DeletedAt == nil {
			return v
		}
	}
	return nil
}

func (s *Server) vnetByID(id string) *vnet {
	for _, v := range s.vnets {
		if v.ID == id && v.DeletedAt == nil {
			return v
		}
	}
	return nil
}

func (s *Server) findCIDRRoute(r *http.Request) (*cidrRoute, *apiError) {
	id := r.PathValue("route_id")
	if !isUUID(id) {
		return nil, badID(r)
	}
	for _, c := range s.cidr {
		if c.ID == id && c.DeletedAt == nil {
			// GUESS: a route of a tunnel outside the token's scope is
			// refused as its tunnel is (scope.go).
			if !s.reachesTunnel(r, c.TunnelID) {
				return nil, errNotPermitted()
			}
			return c, nil
		}
	}
	return nil, errf(http.StatusNotFound, 1015, "You are trying to modify the route for a network that isn't routed.")
}

func (s *Server) checkCIDRRoute(self *cidrRoute, c *cidrRoute) *apiError {
	p, err := netip.ParsePrefix(c.Network)
	if err != nil {
		return errf(http.StatusBadRequest, 1001, "network must be a CIDR")
	}
	c.Network = p.Masked().String()
	if s.tunnelByID(c.TunnelID) == nil {
		return errf(http.StatusBadRequest, 1004, "tunnel %q does not exist in this account", c.TunnelID)
	}
	if c.VirtualNetworkID == "" {
		c.VirtualNetworkID = s.defaultVNet().ID
	} else if s.vnetByID(c.VirtualNetworkID) == nil {
		return errf(http.StatusBadRequest, 1001, "virtual network %q does not exist", c.VirtualNetworkID)
	}
	if len(c.Comment) > 100 {
		return errf(http.StatusBadRequest, 1001, "comment must be at most 100 characters")
	}
	for _, o := range s.cidr {
		if o != self && o.DeletedAt == nil && o.Network == c.Network && o.VirtualNetworkID == c.VirtualNetworkID {
			return errf(http.StatusConflict, 1014, "A route for %s already exists in this virtual network", c.Network)
		}
	}
	return nil
}

func (s *Server) createCIDRRoute(r *http.Request, body []byte) (any, any, *apiError) {
	c := &cidrRoute{}
	if err := decodeBody(body, c); err != nil {
		return nil, nil, err
	}
	// GUESS: routing to a tunnel outside the token's scope is refused as
	// a call on that tunnel is (scope.go).
	if !s.reachesTunnel(r, c.TunnelID) {
		return nil, nil, errNotPermitted()
	}
	if err := s.checkCIDRRoute(nil, c); err != nil {
		return nil, nil, err
	}
	c.ID, c.CreatedAt, c.DeletedAt = newUUID(), s.now(), nil
	s.cidr = append(s.cidr, c)
	return c, nil, nil
}

func (s *Server) listCIDRRoutes(r *http.Request, _ []byte) (any, any, *apiError) {
	q := r.URL.Query()
	var out []cidrRouteView
	for _, c := range s.cidr {
		ok, err := liveFilter(r, c.DeletedAt)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if ok, err = existedAt(r, c.CreatedAt, c.DeletedAt); err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		// Documented: a list shows only the routes of the tunnels the
		// token may read.
		if !s.listable(c.CreatedAt) || !s.reachesTunnel(r, c.TunnelID) {
			continue
		}
		if v, ok := q["comment"]; ok && c.Comment != v[0] {
			continue
		}
		if v := q.Get("tunnel_id"); v != "" && c.TunnelID != v {
			continue
		}
		if v := q.Get("route_id"); v != "" && c.ID != v {
			continue
		}
		if v := q.Get("virtual_network_id"); v != "" && c.VirtualNetworkID != v {
			continue
		}
		np := netip.MustParsePrefix(c.Network)
		if v := q.Get("network_subset"); v != "" {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return nil, nil, errf(http.StatusBadRequest, 1001, "network_subset must be a CIDR")
			}
			if !(p.Bits() <= np.Bits() && p.Contains(np.Addr())) {
				continue
			}
		}
		if v := q.Get("network_superset"); v != "" {
			p, err := netip.ParsePrefix(v)
			if err != nil {
				return nil, nil, errf(http.StatusBadRequest, 1001, "network_superset must be a CIDR")
			}
			if !(np.Bits() <= p.Bits() && np.Contains(p.Addr())) {
				continue
			}
		}
		view := s.cidrView(c)
		if v := q["tun_types"]; len(v) > 0 && !strings.Contains(","+strings.Join(v, ",")+",", ",cfd_tunnel,") {
			continue
		}
		out = append(out, view)
	}
	page, info, err := paginate(r, out, 1, 1000, 20, false)
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

func (s *Server) getCIDRRoute(r *http.Request, _ []byte) (any, any, *apiError) {
	c, err := s.findCIDRRoute(r)
	return c, nil, err
}

func (s *Server) editCIDRRoute(r *http.Request, body []byte) (any, any, *apiError) {
	c, err := s.findCIDRRoute(r)
	if err != nil {
		return nil, nil, err
	}
	var in struct {
		Network          *string `json:"network"`
		TunnelID         *string `json:"tunnel_id"`
		VirtualNetworkID *string `json:"virtual_network_id"`
		Comment          *string `json:"comment"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	next := *c
	for dst, src := range map[*string]*string{&next.Network: in.Network, &next.TunnelID: in.TunnelID, &next.VirtualNetworkID: in.VirtualNetworkID, &next.Comment: in.Comment} {
		if src != nil {
			*dst = *src
		}
	}
	if !s.reachesTunnel(r, next.TunnelID) {
		return nil, nil, errNotPermitted()
	}
	if err := s.checkCIDRRoute(c, &next); err != nil {
		return nil, nil, err
	}
	*c = next
	return c, nil, nil
}

func (s *Server) deleteCIDRRoute(r *http.Request, _ []byte) (any, any, *apiError) {
	c, err := s.findCIDRRoute(r)
	if err != nil {
		return nil, nil, err
	}
	c.DeletedAt = ptrTime(s.now())
	return c, nil, nil
}

func (s *Server) listVNets(r *http.Request, _ []byte) (any, any, *apiError) {
	q := r.URL.Query()
	out := []*vnet{}
	for _, v := range s.vnets {
		ok, err := liveFilter(r, v.DeletedAt)
		if err != nil {
			return nil, nil, err
		}
		if !ok || !s.listable(v.CreatedAt) {
			continue
		}
		if x := q.Get("id"); x != "" && v.ID != x {
			continue
		}
		if x := q.Get("name"); x != "" && v.Name != x {
			continue
		}
		for _, k := range []string{"is_default", "is_default_network"} {
			if x := q.Get(k); x != "" && (x == "true") != v.IsDefaultNetwork {
				ok = false
			}
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil, nil
}

func (s *Server) createVNet(r *http.Request, body []byte) (any, any, *apiError) {
	var in struct {
		Name             string `json:"name"`
		Comment          string `json:"comment"`
		IsDefaultNetwork *bool  `json:"is_default_network"`
		IsDefault        *bool  `json:"is_default"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Name == "" || len(in.Name) > 256 {
		return nil, nil, errf(http.StatusBadRequest, 1001, "name is required (at most 256 characters)")
	}
	for _, v := range s.vnets {
		if v.DeletedAt == nil && v.Name == in.Name {
			return nil, nil, errf(http.StatusConflict, 1014, "A virtual network named %q already exists", in.Name)
		}
	}
	def := (in.IsDefaultNetwork != nil && *in.IsDefaultNetwork) || (in.IsDefault != nil && *in.IsDefault)
	if def {
		for _, v := range s.vnets {
			v.IsDefaultNetwork = false
		}
	}
	v := &vnet{ID: newUUID(), Name: in.Name, Comment: in.Comment, IsDefaultNetwork: def, CreatedAt: s.now()}
	s.vnets = append(s.vnets, v)
	return v, nil, nil
}

func (s *Server) findVNet(r *http.Request) (*vnet, *apiError) {
	id := r.PathValue("virtual_network_id")
	if !isUUID(id) {
		return nil, badID(r)
	}
	if v := s.vnetByID(id); v != nil {
		return v, nil
	}
	return nil, errf(http.StatusNotFound, 1003, "virtual network %s not found", id)
}

func (s *Server) getVNet(r *http.Request, _ []byte) (any, any, *apiError) {
	v, err := s.findVNet(r)
	return v, nil, err
}

func (s *Server) editVNet(r *http.Request, body []byte) (any, any, *apiError) {
	v, err := s.findVNet(r)
	if err != nil {
		return nil, nil, err
	}
	var in struct {
		Name             *string `json:"name"`
		Comment          *string `json:"comment"`
		IsDefaultNetwork *bool   `json:"is_default_network"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Name != nil {
		if *in.Name == "" || len(*in.Name) > 256 {
			return nil, nil, errf(http.StatusBadRequest, 1001, "name must be 1 to 256 characters")
		}
		for _, o := range s.vnets {
			if o != v && o.DeletedAt == nil && o.Name == *in.Name {
				return nil, nil, errf(http.StatusConflict, 1014, "A virtual network named %q already exists", *in.Name)
			}
		}
		v.Name = *in.Name
	}
	if in.Comment != nil {
		v.Comment = *in.Comment
	}
	if in.IsDefaultNetwork != nil {
		switch {
		case *in.IsDefaultNetwork:
			for _, o := range s.vnets {
				o.IsDefaultNetwork = false
			}
			v.IsDefaultNetwork = true
		case v.IsDefaultNetwork:
			// GUESS: an account always has a default; it moves only by
			// making another one the default.
			return nil, nil, errf(http.StatusBadRequest, 1001, "the default virtual network stays the default until another one is made the default")
		}
	}
	return v, nil, nil
}

// deleteVNet refuses the account's default and a virtual network that live
// routes use (GUESS: 400; the real code is undocumented).
func (s *Server) deleteVNet(r *http.Request, _ []byte) (any, any, *apiError) {
	v, err := s.findVNet(r)
	if err != nil {
		return nil, nil, err
	}
	if v.IsDefaultNetwork {
		return nil, nil, errf(http.StatusBadRequest, 1001, "cannot delete the default virtual network; make another virtual network the default first")
	}
	for _, c := range s.cidr {
		if c.DeletedAt == nil && c.VirtualNetworkID == v.ID {
			return nil, nil, errf(http.StatusBadRequest, 1001, "virtual network %s is in use by routes, e.g. %s; delete them first", v.ID, c.Network)
		}
	}
	v.DeletedAt = ptrTime(s.now())
	return v, nil, nil
}

// routeForIP answers the most specific live route containing an IP, in the
// given virtual network or the default one.
func (s *Server) routeForIP(r *http.Request, _ []byte) (any, any, *apiError) {
	ip, perr := netip.ParseAddr(r.PathValue("ip"))
	if perr != nil {
		return nil, nil, errf(http.StatusBadRequest, 1001, "ip must be an IP address")
	}
	vn := r.URL.Query().Get("virtual_network_id")
	if vn == "" {
		vn = s.defaultVNet().ID
	} else if s.vnetByID(vn) == nil {
		return nil, nil, errf(http.StatusBadRequest, 1001, "virtual network %q does not exist", vn)
	}
	var best *cidrRoute
	for _, c := range s.cidr {
		// GUESS: the lookup by address sees what the list sees.
		if c.DeletedAt != nil || c.VirtualNetworkID != vn || !s.reachesTunnel(r, c.TunnelID) {
			continue
		}
		p := netip.MustParsePrefix(c.Network)
		if p.Contains(ip) && (best == nil || p.Bits() > netip.MustParsePrefix(best.Network).Bits()) {
			best = c
		}
	}
	if best == nil {
		return nil, nil, errf(http.StatusNotFound, 1015, "You are trying to modify the route for a network that isn't routed.")
	}
	return s.cidrView(best), nil, nil
}

func (s *Server) cidrView(c *cidrRoute) cidrRouteView {
	view := cidrRouteView{cidrRoute: c, TunType: "cfd_tunnel"}
	for _, t := range s.tunnels {
		if t.ID == c.TunnelID {
			view.TunnelName = t.Name
		}
	}
	for _, vn := range s.vnets {
		if vn.ID == c.VirtualNetworkID {
			view.VirtualNetworkName = vn.Name
		}
	}
	return view
}

// State is a snapshot of what the simulated account holds, for tests and the
// sandbox to inspect.
type State struct {
	Tunnels        []TunnelState   `json:"tunnels"`
	HostnameRoutes []hostnameRoute `json:"hostname_routes"`
	Services       []service       `json:"services"`
	DNSRecords     []dnsRecord     `json:"dns_records"`
	CIDRRoutes     []cidrRoute     `json:"cidr_routes"`
	// VirtualNetworks are the account's virtual networks.
	VirtualNetworks []vnet `json:"virtual_networks"`
	// Access holds the account's Cloudflare Access objects; service
	// tokens come without their secrets.
	Access AccessState `json:"access"`
	// LoadBalancing holds the account's monitors and pools and its zones'
	// load balancers. Pool health is not in it: reading health probes
	// (see poolHealthOf), and a snapshot changes nothing.
	LoadBalancing LoadBalancingState `json:"load_balancing"`
}

// LoadBalancingState is what the account holds in Load Balancing.
type LoadBalancingState struct {
	Monitors      []lbMonitor    `json:"monitors"`
	Pools         []lbPool       `json:"pools"`
	LoadBalancers []loadBalancer `json:"load_balancers"`
}

// AccessState is what the account holds in Cloudflare Access.
type AccessState struct {
	// AuthDomain is the Zero Trust organization's, "" without one.
	AuthDomain    string          `json:"auth_domain"`
	Applications  []accessAppView `json:"applications"`
	Policies      []accessPolicy  `json:"policies"`
	Groups        []accessGroup   `json:"groups"`
	ServiceTokens []serviceToken  `json:"service_tokens"`
}

// TunnelState is a tunnel with its connector count and remote configuration.
type TunnelState struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	DeletedAt  *time.Time `json:"deleted_at"`
	Connectors int        `json:"connectors"`
	// Lingering counts the connectors that stopped but are still listed
	// (Options.ConnectorLinger); Connectors does not include them.
	Lingering     int    `json:"lingering"`
	ConfigVersion int    `json:"config_version"`
	Config        string `json:"config,omitempty"`
}

// Snapshot returns what the account holds. Soft-deleted objects are
// included, with deleted_at set.
func (s *Server) Snapshot() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireConnectors()
	st := State{Tunnels: []TunnelState{}, HostnameRoutes: []hostnameRoute{}, Services: []service{}, DNSRecords: []dnsRecord{}, CIDRRoutes: []cidrRoute{}, VirtualNetworks: []vnet{}}
	for _, t := range s.tunnels {
		ts := TunnelState{ID: t.ID, Name: t.Name, Status: t.Status, DeletedAt: t.DeletedAt, Connectors: len(t.connectors), Lingering: len(t.lingering)}
		if t.config != nil {
			ts.ConfigVersion, ts.Config = t.config.Version, string(t.config.Config)
		}
		st.Tunnels = append(st.Tunnels, ts)
	}
	for _, r := range s.routes {
		st.HostnameRoutes = append(st.HostnameRoutes, *r)
	}
	for _, v := range s.services {
		st.Services = append(st.Services, *v)
	}
	for _, r := range s.records {
		st.DNSRecords = append(st.DNSRecords, *r)
	}
	for _, c := range s.cidr {
		st.CIDRRoutes = append(st.CIDRRoutes, *c)
	}
	for _, v := range s.vnets {
		st.VirtualNetworks = append(st.VirtualNetworks, *v)
	}
	st.Access = AccessState{Applications: []accessAppView{}, Policies: []accessPolicy{}, Groups: []accessGroup{}, ServiceTokens: []serviceToken{}}
	if s.access.org != nil {
		st.Access.AuthDomain = s.access.org.AuthDomain
	}
	for _, a := range s.access.apps {
		v := s.appView(a)
		c := *a
		v.accessApp = &c
		st.Access.Applications = append(st.Access.Applications, v)
	}
	for _, p := range s.access.policies {
		st.Access.Policies = append(st.Access.Policies, s.policyView(p))
	}
	for _, g := range s.access.groups {
		st.Access.Groups = append(st.Access.Groups, *g)
	}
	for _, t := range s.access.tokens {
		st.Access.ServiceTokens = append(st.Access.ServiceTokens, *t)
	}
	st.LoadBalancing = s.loadBalancingState()
	return st
}

func (s *Server) handleState(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.Snapshot())
}
