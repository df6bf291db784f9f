package clients

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/common"
	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/clients/networks"
)

// refusal is what a check's error says: "" when allowed, else the field
// that refused it.
func refusal(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	if ne := (*NetworkNotAllowedError)(nil); errors.As(err, &ne) {
		if !strings.Contains(err.Error(), "spec.allow.networks") || ne.ConditionReason() != common.ReasonNotAllowed {
			t.Fatalf("network refusal %q names no field to lift it, or has reason %s", err, ne.ConditionReason())
		}
		return "spec.allow.networks"
	}
	var na *NotAllowedError
	if !errors.As(err, &na) {
		t.Fatalf("error %v is not a NotAllowedError", err)
	}
	return na.Field
}

func TestCheckHostname(t *testing.T) {
	suffixes := []string{"apps.example.com", "*.wild.example.com", "Trailing.Example.org."}
	cases := map[string]struct {
		suffixes []string
		hostname string
		want     string
	}{
		"NothingListed":           {hostname: "anything.example.net"},
		"TheSuffixItself":         {suffixes: suffixes, hostname: "apps.example.com"},
		"BelowTheSuffix":          {suffixes: suffixes, hostname: "x.apps.example.com"},
		"WildcardBelow":           {suffixes: suffixes, hostname: "*.apps.example.com"},
		"NotALabelBoundary":       {suffixes: suffixes, hostname: "xapps.example.com", want: "spec.allow.hostnameSuffixes"},
		"AParentOfTheSuffix":      {suffixes: suffixes, hostname: "example.com", want: "spec.allow.hostnameSuffixes"},
		"CaseAndTrailingDot":      {suffixes: suffixes, hostname: "X.APPS.Example.COM."},
		"WildcardEntryAllowsApex": {suffixes: suffixes, hostname: "wild.example.com"},
		"WildcardEntryBelow":      {suffixes: suffixes, hostname: "a.b.wild.example.com"},
		"EntryWithTrailingDot":    {suffixes: suffixes, hostname: "a.trailing.example.org"},
		"SuffixInTheMiddle":       {suffixes: suffixes, hostname: "apps.example.com.evil.net", want: "spec.allow.hostnameSuffixes"},
		"EmptyEntryAllowsNothing": {suffixes: []string{""}, hostname: "a.example.com", want: "spec.allow.hostnameSuffixes"},
		"BareWildcardEntry":       {suffixes: []string{"*."}, hostname: "a.example.com", want: "spec.allow.hostnameSuffixes"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Config{Source: "ClusterProviderConfig default", Allow: v1alpha1.Allowances{HostnameSuffixes: tc.suffixes}}
			if got := refusal(t, c.CheckHostname(tc.hostname)); got != tc.want {
				t.Errorf("CheckHostname(%q) refused by %q, want %q", tc.hostname, got, tc.want)
			}
		})
	}
}

func TestCheckNetwork(t *testing.T) {
	const field = "spec.allow.networks"
	cases := map[string]struct {
		allowed []string
		network string
		want    string
	}{
		"DefaultAllowsAHost":          {network: "10.1.2.3/32"},
		"DefaultAllowsAWideNetwork":   {network: "10.0.0.0/8"},
		"DefaultRefusesEveryIPv4":     {network: "0.0.0.0/0", want: field},
		"DefaultRefusesEveryIPv6":     {network: "::/0", want: field},
		"DefaultRefusesUnmasked":      {network: "10.9.9.9/0", want: field},
		"DefaultRefusesAHalf":         {network: "128.0.0.0/1", want: field},
		"DefaultRefusesAnIPv6Half":    {network: "::/1", want: field},
		"DefaultRefusesNAT64OfIPv4":   {network: "64:ff9b::/96", want: field},
		"DefaultRefusesLocalUseNAT64": {network: "64:ff9b:1::/48", want: field},
		"DefaultRefusesA/7":           {network: "10.0.0.0/7", want: field},
		"DefaultAllowsA/16OfIPv6":     {network: "fd12:3456::/32"},
		"ListedAllowsAHalf":           {allowed: []string{"0.0.0.0/0"}, network: "128.0.0.0/1"},
		"ListedAllowsEverything":      {allowed: []string{"0.0.0.0/0"}, network: "0.0.0.0/0"},
		"InsideAnEntry":               {allowed: []string{"10.0.0.0/8"}, network: "10.1.0.0/16"},
		"TheEntryItself":              {allowed: []string{"10.0.0.0/8"}, network: "10.0.0.0/8"},
		"WiderThanTheEntry":           {allowed: []string{"10.0.0.0/8"}, network: "10.0.0.0/7", want: field},
		"OutsideEveryEntry":           {allowed: []string{"10.0.0.0/8", "192.168.0.0/16"}, network: "172.16.0.0/12", want: field},
		"OtherFamily":                 {allowed: []string{"0.0.0.0/0"}, network: "fd00::/8", want: field},
		"UnmaskedEntry":               {allowed: []string{"10.1.2.3/16"}, network: "10.1.200.0/24"},
		"InvalidEntryAllowsNothing":   {allowed: []string{"not-a-cidr"}, network: "10.0.0.0/8", want: field},
		"InvalidNetworkLeftToTheSpec": {allowed: []string{"10.0.0.0/8"}, network: "nonsense"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Config{Source: "ProviderConfig team-a/cf", Allow: v1alpha1.Allowances{Networks: tc.allowed}}
			if got := refusal(t, c.CheckNetwork(tc.network)); got != tc.want {
				t.Errorf("CheckNetwork(%q) refused by %q, want %q", tc.network, got, tc.want)
			}
		})
	}
}

func TestCheckNamespaceNetworks(t *testing.T) {
	older := []networks.Route{{Name: "a", Network: "10.0.0.0/8"}, {Name: "b", Network: "11.0.0.0/8"}}
	third := networks.Route{Name: "c", Network: "12.0.0.0/8", Created: time.Unix(1, 0)}
	cases := map[string]struct {
		allowed []string
		mine    networks.Route
		want    string
	}{
		"DefaultRefusesBeyondTwoSlashEights": {mine: third, want: "spec.allow.networks"},
		"DefaultRefusesNAT64BeyondThem":      {mine: networks.Route{Name: "c", Network: "64:ff9b::c00:0/104", Created: time.Unix(1, 0)}, want: "spec.allow.networks"},
		"DefaultAllowsAHostBeside":           {mine: networks.Route{Name: "c", Network: "fd00::1/128", Created: time.Unix(1, 0)}},
		"ListedNetworksJudgeEachRouteAlone":  {allowed: []string{"0.0.0.0/0"}, mine: third},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Config{Source: "ProviderConfig team-a/cf", Allow: v1alpha1.Allowances{Networks: tc.allowed}}
			if got := refusal(t, c.CheckNamespaceNetworks(tc.mine, older)); got != tc.want {
				t.Errorf("CheckNamespaceNetworks(%v) refused by %q, want %q", tc.mine, got, tc.want)
			}
		})
	}
}

func TestCheckDefaultVirtualNetwork(t *testing.T) {
	const field = "spec.allow.defaultVirtualNetwork"
	cases := map[string]struct {
		namespaced bool
		allow      *bool
		want       string
	}{
		"ClusterConfigByDefault":    {},
		"ClusterConfigForbidden":    {allow: ptr.To(false), want: field},
		"NamespacedConfigByDefault": {namespaced: true, want: field},
		"NamespacedConfigAllowed":   {namespaced: true, allow: ptr.To(true)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := Config{Source: "x", Namespaced: tc.namespaced, Allow: v1alpha1.Allowances{DefaultVirtualNetwork: tc.allow}}
			if got := refusal(t, c.CheckDefaultVirtualNetwork("office")); got != tc.want {
				t.Errorf("refused by %q, want %q", got, tc.want)
			}
		})
	}
}
