package connector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/context-labs/provider-cloudflare-tunnel/apis/tunnels/v1alpha1"
)

func TestArgs(t *testing.T) {
	base := BaseArgs()
	cases := map[string]struct {
		spec    *v1alpha1.ConnectorSpec
		want    []string
		refused bool
	}{
		"NoConnectorIsTheBase":    {spec: nil, want: base},
		"EmptyConnectorIsTheBase": {spec: &v1alpha1.ConnectorSpec{}, want: base},
		"ProtocolAfterRun": {
			spec: &v1alpha1.ConnectorSpec{Protocol: ptr.To(v1alpha1.ConnectorProtocolHTTP2)},
			want: append(BaseArgs(), "--protocol", "http2"),
		},
		"ExtraArgsLastInOrder": {
			spec: &v1alpha1.ConnectorSpec{Protocol: ptr.To(v1alpha1.ConnectorProtocolQUIC), ExtraArgs: []string{"--loglevel=debug", "--post-quantum", "--grace-period=45s"}},
			want: append(BaseArgs(), "--protocol", "quic", "--loglevel=debug", "--post-quantum", "--grace-period=45s"),
		},
		"UnknownProtocol":  {spec: &v1alpha1.ConnectorSpec{Protocol: ptr.To(v1alpha1.ConnectorProtocol("h3"))}, refused: true},
		"TokenInExtraArgs": {spec: &v1alpha1.ConnectorSpec{ExtraArgs: []string{"--loglevel=info", "--token=abc"}}, refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Args(tc.spec)
			if tc.refused {
				if Reason(err) != ReasonInvalidConnector {
					t.Fatalf("Args: got %v, %v; want an InvalidConnector refusal", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Args (-want +got):\n%s", diff)
			}
		})
	}
}

// ExtraArgCases are the allow list's answers; the CRD's CEL rule gives the
// same (tested at admission by the cloudflaretunnel package).
var ExtraArgCases = map[string]bool{
	"--loglevel=debug":                   true,
	"--loglevel=fatal":                   true,
	"--transport-loglevel=warn":          true,
	"--output=json":                      true,
	"--edge-ip-version=6":                true,
	"--edge-ip-version=auto":             true,
	"--edge-bind-address=10.0.0.7":       true,
	"--edge-bind-address=fd00::7":        true,
	"--region=us":                        true,
	"--retries=8":                        true,
	"--grace-period=1m30s":               true,
	"--grace-period=2.5s":                true,
	"--tag=team=edge":                    true,
	"--tag=price=$5":                     true,
	"--tag=a=b$":                         true,
	"--tag=a=$$":                         true,
	"--tag=a=(b)":                        true,
	"--tag=leak=$(TUNNEL_TOKEN)":         false,
	"--tag=leak=$$(TUNNEL_TOKEN)":        false,
	"--tag=leak=$$$(TUNNEL_TOKEN)":       false,
	"--tag=a=$(":                         false,
	"--dns-resolver-addrs=1.1.1.1:53":    true,
	"--dns-resolver-addrs=[fd00::53]:53": true,
	"--post-quantum":                     true,
	"--token=eyJhIjoi":                   false,
	"--token":                            false,
	"-token=x":                           false,
	"--token-file=/tmp/t":                false,
	"--credentials-file=/c.json":         false,
	"--credentials-contents={}":          false,
	"--protocol=http2":                   false,
	"--metrics=0.0.0.0:9000":             false,
	"--config=/etc/cloudflared.yml":      false,
	"--origincert=/cert.pem":             false,
	"--logfile=/tmp/log":                 false,
	"--pidfile=/tmp/pid":                 false,
	"--edge=evil.example:7844":           false,
	"--loglevel":                         false,
	"--loglevel=verbose":                 false,
	"--loglevel debug":                   false,
	"--retries=8 --token=x":              false,
	"--region=eu":                        false,
	"--tag=a=b c":                        false,
	"--grace-period=soon":                false,
	"--post-quantum=false":               false,
	"run":                                false,
	"":                                   false,
}

func TestCheckExtraArg(t *testing.T) {
	for arg, ok := range ExtraArgCases {
		err := CheckExtraArg(arg)
		if (err == nil) != ok {
			t.Errorf("CheckExtraArg(%q) = %v, want allowed %v", arg, err, ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "spec.connector.extraArgs") {
			t.Errorf("CheckExtraArg(%q): %q does not name the field", arg, err)
		}
	}
}

func TestCheckImage(t *testing.T) {
	cases := map[string]bool{
		v1alpha1.DefaultCloudflaredImage:                                    true,
		"cloudflare/cloudflared:2025.7.0":                                   true,
		"cloudflare/cloudflared:2025.10.1":                                  true,
		"docker.io/cloudflare/cloudflared:2026.1.0":                         true,
		"cloudflare/cloudflared:2025.6.1":                                   false,
		"cloudflare/cloudflared:2024.12.2":                                  false,
		"docker.io/cloudflare/cloudflared:2025.5.0":                         false,
		"cloudflare/cloudflared:2025.4.0-arm64":                             false,
		"cloudflare/cloudflared:2025.4.0@sha256:" + strings.Repeat("a", 64): false,
		// Not an official calendar tag: the user's call.
		"cloudflare/cloudflared:latest":                            true,
		"registry.example/mirror/cloudflared:2024.1.0":             true,
		"cloudflare/cloudflared@sha256:" + strings.Repeat("b", 64): true,
	}
	for image, ok := range cases {
		err := CheckImage(image)
		if (err == nil) != ok {
			t.Errorf("CheckImage(%q) = %v, want allowed %v", image, err, ok)
		}
		if err != nil && (Reason(err) != ReasonInvalidConnector || !strings.Contains(err.Error(), v1alpha1.MinimumCloudflaredVersion)) {
			t.Errorf("CheckImage(%q): %v does not say the minimum", image, err)
		}
	}
	if err := CheckImage(v1alpha1.DefaultCloudflaredImage); err != nil {
		t.Errorf("the default image is refused: %v", err)
	}
}

// TestAdmissionAllowsTheSameExtraArgs: the CRD's CEL rule matches with the
// very pattern CheckExtraArg uses (CEL's matches is RE2, as Go's regexp), so
// admission and the controller draw the same line.
func TestAdmissionAllowsTheSameExtraArgs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "package", "crds", "tunnels.cloudflare.com_cloudflaretunnels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	extra := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["connector"].Properties["extraArgs"]
	want := "self.all(a, a.matches(r'" + v1alpha1.ConnectorExtraArgPattern + "'))"
	for _, r := range extra.XValidations {
		if r.Rule == want {
			return
		}
	}
	t.Errorf("no CEL rule of spec.connector.extraArgs is %s (run make generate, or make the marker's pattern v1alpha1.ConnectorExtraArgPattern)", want)
}

func TestCheckPodMetadata(t *testing.T) {
	cases := map[string]struct {
		spec *v1alpha1.ConnectorSpec
		says string
	}{
		"None":               {spec: nil},
		"Valid":              {spec: &v1alpha1.ConnectorSpec{PodLabels: map[string]string{"team": "edge", "example.com/tier": "1"}, PodAnnotations: map[string]string{"prometheus.io/scrape": "true"}}},
		"InvalidLabelKey":    {spec: &v1alpha1.ConnectorSpec{PodLabels: map[string]string{"a b": "x"}}, says: "spec.connector.podLabels"},
		"InvalidLabelValue":  {spec: &v1alpha1.ConnectorSpec{PodLabels: map[string]string{"team": "not valid!"}}, says: "spec.connector.podLabels"},
		"InvalidAnnotation":  {spec: &v1alpha1.ConnectorSpec{PodAnnotations: map[string]string{"/x": "y"}}, says: "spec.connector.podAnnotations"},
		"SelectorLabel":      {spec: &v1alpha1.ConnectorSpec{PodLabels: map[string]string{"app.kubernetes.io/instance": "x"}}, says: "may not set app.kubernetes.io/instance"},
		"ChecksumAnnotation": {spec: &v1alpha1.ConnectorSpec{PodAnnotations: map[string]string{"tunnels.cloudflare.com/token-checksum": "x"}}, says: "may not set tunnels.cloudflare.com/token-checksum"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckPodMetadata(tc.spec)
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if Reason(err) != ReasonInvalidConnector || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("got %v, want an InvalidConnector refusal saying %q", err, tc.says)
			}
		})
	}
}
