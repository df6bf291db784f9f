package providertest

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/context-labs/provider-cloudflare-tunnel/internal/testenv/wait"
)

// WithoutRule runs create, until it succeeds, with the CEL rules
// (x-kubernetes-validations) of one field of CRD crd lifted, as before the
// rule existed; then puts them back. path is the field's schema under a
// version's openAPIV3Schema.properties, e.g. "spec", "forProvider",
// "rotation", "requestedAt". It stores what the rule now refuses, as a
// cluster upgraded from a release without the rule may hold.
func (p *Provider) WithoutRule(t *testing.T, crd string, path []string, create func() error) {
	t.Helper()
	ctx := context.Background()
	full := []string{"schema", "openAPIV3Schema"}
	for _, f := range path {
		full = append(full, "properties", f)
	}
	full = append(full, "x-kubernetes-validations")
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	key := client.ObjectKey{Name: crd}
	var rule []any
	edit := func(set func(version map[string]any)) {
		wait.Eventually(t, wait.Patience, "CRD "+crd+" edited", func() error {
			if err := p.Client.Get(ctx, key, obj); err != nil {
				return err
			}
			versions, _, _ := unstructured.NestedSlice(obj.Object, "spec", "versions")
			for _, v := range versions {
				set(v.(map[string]any))
			}
			if err := unstructured.SetNestedSlice(obj.Object, versions, "spec", "versions"); err != nil {
				return err
			}
			return p.Client.Update(ctx, obj)
		})
	}
	edit(func(v map[string]any) {
		if r, ok, _ := unstructured.NestedSlice(v, full...); ok {
			rule = r
		}
		unstructured.RemoveNestedField(v, full...)
	})
	if rule == nil {
		t.Fatalf("CRD %s has no rule on %v", crd, path)
	}
	defer edit(func(v map[string]any) { _ = unstructured.SetNestedSlice(v, rule, full...) })
	wait.Eventually(t, wait.Patience, "a create without the rule", create)
}
