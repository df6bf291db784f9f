package clients

import (
	"errors"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

// refusal is what a check's error says: "" when allowed, else the field
// that refused it.
func refusal(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
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
