// Command cloudflare-sim serves the Cloudflare API simulator over HTTP, for the
// local sandbox and for trying the provider without a Cloudflare account.
//
//	go run ./cmd/cloudflare-sim --listen 127.0.0.1:8787 --token T \
//	    --account-id 0123456789abcdef0123456789abcdef --zone example.com
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/sim"
)

type zones []string

func (z *zones) String() string     { return strings.Join(*z, ",") }
func (z *zones) Set(v string) error { *z = append(*z, v); return nil }

func main() {
	var (
		listen    = flag.String("listen", "127.0.0.1:8787", "address to serve on")
		token     = flag.String("token", os.Getenv("CLOUDFLARE_SIM_TOKEN"), "the API token to accept (default $CLOUDFLARE_SIM_TOKEN); prefer the variable, which keeps it out of process listings")
		account   = flag.String("account-id", "", "the account ID to serve (32 hex characters)")
		rateLimit = flag.Int("rate-limit", sim.CloudflareRateLimit, "requests per token per --rate-window (Cloudflare's: 1200 per 5m); 0 turns rate limiting off")
		window    = flag.Duration("rate-window", sim.CloudflareRateWindow, "rate-limit window")
		penalty   = flag.Duration("rate-penalty", 0, "how long every call is refused after the limit is exceeded (default: the window)")
		errorRate = flag.Float64("error-rate", 0, "fraction (0-1) of API calls answered with an injected 500")
		latency   = flag.Duration("latency", 0, "latency added to every API call")
		lostRate  = flag.Float64("lost-response-rate", 0, "fraction (0-1) of successful writes answered with a 500 after they happened")
		listLag   = flag.Duration("list-lag", 0, "hide objects from list responses until they are this old (GETs by ID see them at once); 0 lists every write at once")
		linger    = flag.Duration("connector-linger", 0, "keep a stopped connector listed, and tunnel deletes refused with 1022, for this long (Cloudflare: ~30s); 0 drops it at once")
		legacy    = flag.Bool("legacy-tunnel-connections", false, "put the deprecated connections array in tunnel responses, as Cloudflare did before 2026-10-05")
		team      = flag.String("access-team", "sim-team", "the Zero Trust team name: Access's auth domain is <team>.cloudflareaccess.com; \"\" models an account without Zero Trust, whose Access calls are refused")
		edgeAddr  = flag.String("edge-addr", "", "serve the account's proxied hostnames as Cloudflare's edge and cloudflared would, over plain HTTP, on this address (e.g. 127.0.0.1:8443); point origins at local processes with PUT /__sim/edge/origins; \"\" (the default) serves no edge")
		zs        zones
	)
	flag.Var(&zs, "zone", "a DNS zone in the account (repeatable)")
	flag.Parse()

	if *token == "" {
		fail("--token (or CLOUDFLARE_SIM_TOKEN) is required")
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(*account) {
		fail("--account-id must be 32 lower-case hex characters")
	}
	if *errorRate < 0 || *errorRate > 1 {
		fail("--error-rate must be between 0 and 1")
	}
	if *lostRate < 0 || *lostRate > 1 {
		fail("--lost-response-rate must be between 0 and 1")
	}
	if *team != "" && !regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`).MatchString(*team) {
		fail("--access-team must be a DNS label: lower-case letters, digits and inner hyphens")
	}
	if *listLag < 0 || *linger < 0 {
		fail("--list-lag and --connector-linger must not be negative")
	}
	s := sim.New(sim.Options{
		Token: *token, AccountID: *account, Zones: zs,
		RateLimit: *rateLimit, RateWindow: *window, RatePenalty: *penalty,
		ErrorRate: *errorRate, Latency: *latency, LostResponseRate: *lostRate,
		ListLag: *listLag, ConnectorLinger: *linger, LegacyTunnelConnections: *legacy,
		AccessTeam: *team, NoAccessOrganization: *team == "",
	})
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fail(err.Error())
	}
	fmt.Printf("http://%s/client/v4/\n", l.Addr())
	fmt.Fprintf(os.Stderr, "cloudflare-sim: account %s, zones %v, Access team %q, rate limit %d per %s, list lag %s, connector linger %s; stats at http://%s/__sim/stats\n", *account, zs, *team, *rateLimit, *window, *listLag, *linger, l.Addr())
	if *edgeAddr != "" {
		serveEdge(s, *edgeAddr, l.Addr().String())
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(l); err != nil {
		fail(err.Error())
	}
}

// serveEdge serves the simulated edge on its own listener, beside the API.
func serveEdge(s *sim.Server, addr, apiAddr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fail("--edge-addr: " + err.Error())
	}
	fmt.Fprintf(os.Stderr, "cloudflare-sim: edge at http://%s/ (send the hostname as Host); origins at http://%s/__sim/edge/origins\n", l.Addr(), apiAddr)
	srv := &http.Server{Handler: s.Edge(sim.EdgeOptions{}), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil {
			fail("edge: " + err.Error())
		}
	}()
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "cloudflare-sim:", msg)
	os.Exit(2)
}
