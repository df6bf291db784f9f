package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

type hostnameRoute struct {
	ID         string     `json:"id"`
	Hostname   string     `json:"hostname"`
	TunnelID   string     `json:"tunnel_id"`
	TunnelName string     `json:"tunnel_name"`
	TunType    string     `json:"tun_type"`
	Comment    string     `json:"comment"`
	CreatedAt  time.Time  `json:"created_at"`
	DeletedAt  *time.Time `json:"deleted_at"`
}

// NormalizeHostname is how Cloudflare stores a route's hostname: lower case,
// without surrounding dots, and with a leading wildcard label dropped
// ("*.internal.local" is stored as "internal.local").
func NormalizeHostname(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = strings.Trim(h, ".")
	h = strings.TrimPrefix(h, "*.")
	return strings.Trim(h, ".")
}

func (s *Server) findRoute(r *http.Request) (*hostnameRoute, *apiError) {
	id := r.PathValue("hostname_route_id")
	if !isUUID(id) {
		return nil, badID(r)
	}
	for _, rt := range s.routes {
		if rt.ID == id {
			return rt, nil
		}
	}
	return nil, errf(http.StatusNotFound, 1003, "Hostname route not found")
}

func (s *Server) routeConflict(self *hostnameRoute, hostname string) *apiError {
	for _, o := range s.routes {
		if o != self && o.DeletedAt == nil && o.Hostname == hostname {
			return errf(http.StatusConflict, 1014, "A hostname route for %s already exists", hostname)
		}
	}
	return nil
}

func (s *Server) createRoute(r *http.Request, body []byte) (any, any, *apiError) {
	var in struct {
		Hostname string `json:"hostname"`
		TunnelID string `json:"tunnel_id"`
		Comment  string `json:"comment"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	h := NormalizeHostname(in.Hostname)
	if h == "" {
		return nil, nil, errf(http.StatusBadRequest, 1001, "hostname is required")
	}
	t := s.tunnelByID(in.TunnelID)
	if t == nil {
		return nil, nil, errf(http.StatusBadRequest, 1004, "tunnel_id %q does not name a tunnel of this account", in.TunnelID)
	}
	if err := s.routeConflict(nil, h); err != nil {
		return nil, nil, err
	}
	rt := &hostnameRoute{ID: newUUID(), Hostname: h, TunnelID: t.ID, TunnelName: t.Name, TunType: "cfd_tunnel", Comment: in.Comment, CreatedAt: s.now()}
	s.routes = append(s.routes, rt)
	return rt, nil, nil
}

func (s *Server) listRoutes(r *http.Request, _ []byte) (any, any, *apiError) {
	q := r.URL.Query()
	var out []*hostnameRoute
	for _, rt := range s.routes {
		ok, err := liveFilter(r, rt.DeletedAt)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		if ok, err = existedAt(r, rt.CreatedAt, rt.DeletedAt); err != nil || !ok {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if !s.listable(rt.CreatedAt) {
			continue
		}
		if v := q.Get("id"); v != "" && rt.ID != v {
			continue
		}
		// The hostname filter is a case-insensitive substring match.
		if v := q.Get("hostname"); v != "" && !strings.Contains(rt.Hostname, strings.ToLower(v)) {
			continue
		}
		if v := q.Get("tunnel_id"); v != "" && rt.TunnelID != v {
			continue
		}
		if v, ok := q["comment"]; ok && rt.Comment != v[0] {
			continue
		}
		out = append(out, rt)
	}
	page, info, err := paginate(r, out, 1, 1000, 20, false)
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

func (s *Server) getRoute(r *http.Request, _ []byte) (any, any, *apiError) {
	rt, err := s.findRoute(r)
	return rt, nil, err
}

func (s *Server) editRoute(r *http.Request, body []byte) (any, any, *apiError) {
	rt, err := s.findRoute(r)
	if err != nil {
		return nil, nil, err
	}
	if rt.DeletedAt != nil {
		return nil, nil, errf(http.StatusNotFound, 1003, "Hostname route not found")
	}
	var in struct {
		Hostname *string `json:"hostname"`
		TunnelID *string `json:"tunnel_id"`
		Comment  *string `json:"comment"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Hostname != nil {
		h := NormalizeHostname(*in.Hostname)
		if h == "" {
			return nil, nil, errf(http.StatusBadRequest, 1001, "hostname must not be empty")
		}
		if err := s.routeConflict(rt, h); err != nil {
			return nil, nil, err
		}
		rt.Hostname = h
	}
	if in.TunnelID != nil {
		t := s.tunnelByID(*in.TunnelID)
		if t == nil {
			return nil, nil, errf(http.StatusBadRequest, 1004, "tunnel_id %q does not name a tunnel of this account", *in.TunnelID)
		}
		rt.TunnelID, rt.TunnelName = t.ID, t.Name
	}
	if in.Comment != nil {
		rt.Comment = *in.Comment
	}
	return rt, nil, nil
}

func (s *Server) deleteRoute(r *http.Request, _ []byte) (any, any, *apiError) {
	rt, err := s.findRoute(r)
	if err != nil {
		return nil, nil, err
	}
	if rt.DeletedAt != nil {
		return nil, nil, errf(http.StatusNotFound, 1003, "Hostname route not found")
	}
	rt.DeletedAt = ptrTime(s.now())
	return rt, nil, nil
}

// --- Workers VPC directory services ----------------------------------------

type serviceHost struct {
	Hostname        string           `json:"hostname,omitempty"`
	IPv4            string           `json:"ipv4,omitempty"`
	IPv6            string           `json:"ipv6,omitempty"`
	Network         *serviceNetwork  `json:"network,omitempty"`
	ResolverNetwork *resolverNetwork `json:"resolver_network,omitempty"`
}

type serviceNetwork struct {
	TunnelID string `json:"tunnel_id"`
}

type resolverNetwork struct {
	TunnelID    string   `json:"tunnel_id"`
	ResolverIPs []string `json:"resolver_ips,omitempty"`
}

type service struct {
	ServiceID   string          `json:"service_id"`
	Name        string          `json:"name"`
	Type        string          `json:"type"`
	Host        serviceHost     `json:"host"`
	TCPPort     *int            `json:"tcp_port,omitempty"`
	HTTPPort    *int            `json:"http_port,omitempty"`
	HTTPSPort   *int            `json:"https_port,omitempty"`
	AppProtocol *string         `json:"app_protocol,omitempty"`
	TLSSettings json.RawMessage `json:"tls_settings,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

func (s *Server) findService(r *http.Request) (*service, int, *apiError) {
	id := r.PathValue("service_id")
	if !isUUID(id) {
		return nil, -1, badID(r)
	}
	for i, sv := range s.services {
		if sv.ServiceID == id {
			return sv, i, nil
		}
	}
	return nil, -1, errf(http.StatusNotFound, 1003, "Service not found")
}

// parseService validates a service body as Cloudflare does; self is the
// service being replaced (for the duplicate-name check).
func (s *Server) parseService(body []byte, self *service) (*service, *apiError) {
	in := &service{}
	if err := decodeBody(body, in); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Name) == "" {
		return nil, errf(http.StatusBadRequest, 1001, "name is required")
	}
	switch in.Type {
	case "tcp":
	case "http":
		if in.HTTPPort == nil && in.HTTPSPort == nil {
			return nil, errf(http.StatusBadRequest, 1001, "an http service needs http_port or https_port")
		}
	default:
		return nil, errf(http.StatusBadRequest, 1001, "type must be tcp or http")
	}
	var tunnelID string
	switch h := in.Host; {
	case h.Hostname != "" && h.ResolverNetwork != nil:
		tunnelID = h.ResolverNetwork.TunnelID
	case (h.IPv4 != "" || h.IPv6 != "") && h.Network != nil:
		tunnelID = h.Network.TunnelID
	default:
		return nil, errf(http.StatusBadRequest, 1001, "host must be {hostname, resolver_network} or {ipv4|ipv6, network}")
	}
	if s.tunnelByID(tunnelID) == nil {
		return nil, errf(http.StatusBadRequest, 1004, "tunnel %q does not exist in this account", tunnelID)
	}
	for _, p := range []*int{in.TCPPort, in.HTTPPort, in.HTTPSPort} {
		if p != nil && (*p < 1 || *p > 65535) {
			return nil, errf(http.StatusBadRequest, 1001, "ports must be between 1 and 65535")
		}
	}
	for _, o := range s.services {
		if o != self && o.Name == in.Name {
			return nil, errf(http.StatusConflict, 1014, "A service named %q already exists", in.Name)
		}
	}
	return in, nil
}

func (s *Server) createService(r *http.Request, body []byte) (any, any, *apiError) {
	sv, err := s.parseService(body, nil)
	if err != nil {
		return nil, nil, err
	}
	sv.ServiceID, sv.CreatedAt, sv.UpdatedAt = newUUID(), s.now(), s.now()
	s.services = append(s.services, sv)
	return sv, nil, nil
}

func (s *Server) listServices(r *http.Request, _ []byte) (any, any, *apiError) {
	var out []*service
	for _, sv := range s.services {
		if !s.listable(sv.CreatedAt) {
			continue
		}
		if v := r.URL.Query().Get("type"); v != "" && sv.Type != v {
			continue
		}
		out = append(out, sv)
	}
	page, info, err := paginate(r, out, 1, 1000, 1000, true)
	if err != nil {
		return nil, nil, err
	}
	return page, info, nil
}

func (s *Server) getService(r *http.Request, _ []byte) (any, any, *apiError) {
	sv, _, err := s.findService(r)
	return sv, nil, err
}

// updateService replaces the whole service: PUT is not a merge.
func (s *Server) updateService(r *http.Request, body []byte) (any, any, *apiError) {
	old, i, err := s.findService(r)
	if err != nil {
		return nil, nil, err
	}
	sv, err := s.parseService(body, old)
	if err != nil {
		return nil, nil, err
	}
	sv.ServiceID, sv.CreatedAt, sv.UpdatedAt = old.ServiceID, old.CreatedAt, s.now()
	s.services[i] = sv
	return sv, nil, nil
}

func (s *Server) deleteService(r *http.Request, _ []byte) (any, any, *apiError) {
	_, i, err := s.findService(r)
	if err != nil {
		return nil, nil, err
	}
	s.services = append(s.services[:i], s.services[i+1:]...)
	return nil, nil, nil
}
