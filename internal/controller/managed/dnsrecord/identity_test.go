package dnsrecord

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/dns/v1alpha1"
	"github.com/context-labs/provider-cloudflare-tunnel/internal/ownership"
)

// uid, testIdentity and mark are the managed resource of the unit tests
// (newCR): its UID, its identity under the test owner ID, and its marker.
const (
	uid       = types.UID("0b7c5a8e-3f2d-4c1a-9e6b-1d2f3a4b5c6d")
	testOwner = "test-owner"
)

var (
	testIdentity = ownership.Identity{Owner: testOwner, Kind: v1alpha1.DNSRecordKind, Name: "app", UID: uid}
	mark         = testIdentity.Mark()
)
