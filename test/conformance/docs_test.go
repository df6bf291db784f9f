package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"
)

const gatewayDoc = "../../docs/gateway-api.md"

// The conformance table of docs/gateway-api.md is the report it links to
// (the copy of the latest in docs/conformance/): its date and commit, and
// for each profile the tests passed, skipped by feature (the suite's tests
// of the profile whose features are not declared supported, which the
// report does not count), skipped by name and failed. Every test the report
// says is skipped is one skipped by name here, with its reason.
func TestDocsMatchTheReport(t *testing.T) {
	doc, err := os.ReadFile(gatewayDoc)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\[report\]\((conformance/report-[^)]+\.yaml)\)`).FindSubmatch(doc)
	if link == nil {
		t.Fatalf("%s links to no report (conformance/report-<version>.yaml)", gatewayDoc)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(gatewayDoc), string(link[1])))
	if err != nil {
		t.Fatal(err)
	}
	var report confv1.ConformanceReport
	if err := yaml.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Date) < 10 {
		t.Fatalf("report %s has no date: %q", link[1], report.Date)
	}
	if want := fmt.Sprintf("**Latest result** (%s, commit %s,", report.Date[:10], report.Implementation.Version); !strings.Contains(string(doc), want) {
		t.Errorf("%s does not say %q", gatewayDoc, want)
	}
	for _, pr := range report.ProfileReports {
		profile, ok := profiles[pr.Name]
		if !ok {
			t.Errorf("report %s: unknown profile %s", link[1], pr.Name)
			continue
		}
		st := pr.Core
		if pr.Extended != nil {
			st.Passed += pr.Extended.Passed
			st.Skipped += pr.Extended.Skipped
			st.Failed += pr.Extended.Failed
			st.SkippedTests = append(st.SkippedTests, pr.Extended.SkippedTests...)
		}
		run, byFeature := testsOf(profile)
		if got := int(st.Passed + st.Skipped + st.Failed); got != run {
			t.Errorf("report %s, %s: %d tests passed, skipped or failed; %d of the profile's tests have the declared features", link[1], pr.Name, got, run)
		}
		row := fmt.Sprintf("| %s | %d | %d | %d | %d |", pr.Name, st.Passed, byFeature, st.Skipped, st.Failed)
		if !strings.Contains(string(doc), row) {
			t.Errorf("%s has no row %q (profile, passed, skipped by feature, skipped by name, failed)", gatewayDoc, row)
		}
		for _, name := range st.SkippedTests {
			if _, ok := skipped[name]; !ok {
				t.Errorf("report %s skips %s, which is not skipped by name", link[1], name)
			}
		}
	}
}

var profiles = map[string]suite.ConformanceProfile{
	string(suite.GatewayHTTPConformanceProfileName): suite.GatewayHTTPConformanceProfile,
	string(suite.GatewayGRPCConformanceProfileName): suite.GatewayGRPCConformanceProfile,
}

// testsOf counts the suite's tests of a profile (all their features the
// profile's) that run with the declared features, and those skipped for a
// feature not declared.
func testsOf(p suite.ConformanceProfile) (run, byFeature int) {
	supported := sets.New(SupportedFeatures...).Union(p.CoreFeatures)
	for _, test := range tests.ConformanceTests {
		if !slices.ContainsFunc(test.Features, func(f features.FeatureName) bool { return !p.CoreFeatures.Has(f) && !p.ExtendedFeatures.Has(f) }) {
			if supported.HasAll(test.Features...) {
				run++
			} else {
				byFeature++
			}
		}
	}
	return run, byFeature
}
