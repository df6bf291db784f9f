package mr

import (
	"errors"
	"testing"
	"time"

	kmeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// notYet answers "no match" until it was asked misses times.
type notYet struct {
	kmeta.RESTMapper
	misses, asked int
	other         error
}

func (m *notYet) RESTMapping(gk schema.GroupKind, versions ...string) (*kmeta.RESTMapping, error) {
	m.asked++
	if m.other != nil {
		return nil, m.other
	}
	if m.asked <= m.misses {
		return nil, &kmeta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return &kmeta.RESTMapping{}, nil
}

func TestKindServed(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "zerotrust.tunnels.cloudflare.com", Version: "v1alpha1", Kind: "AccessServiceToken"}
	cases := map[string]struct {
		m       *notYet
		within  time.Duration
		wantErr bool
		asked   int
	}{
		"ServedAtOnce":            {m: &notYet{}, within: time.Minute, asked: 1},
		"ServedAfterDiscoveryLag": {m: &notYet{misses: 3}, within: time.Minute, asked: 4},
		"NeverServed":             {m: &notYet{misses: 1000}, within: 2 * time.Second, wantErr: true, asked: 5},
		"AnotherErrorAtOnce":      {m: &notYet{other: errors.New("boom")}, within: time.Minute, wantErr: true, asked: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := KindServed(tc.m, gvk, tc.within, func(time.Duration) {})
			if (err != nil) != tc.wantErr {
				t.Errorf("KindServed(...): error %v, want error %t", err, tc.wantErr)
			}
			if tc.m.asked != tc.asked {
				t.Errorf("KindServed(...): asked %d times, want %d", tc.m.asked, tc.asked)
			}
		})
	}
}
