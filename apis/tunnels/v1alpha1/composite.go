package v1alpha1

// CompositeCrossplane is what Crossplane's tools read of a composite, at
// the path they read it on Crossplane's own composite resources
// (spec.crossplane): `crossplane resource trace` shows the objects
// resourceRefs names as the composite's children (their namespace is the
// composite's).
type CompositeCrossplane struct {
	// ResourceRefs are the objects the composite made that exist now,
	// sorted by apiVersion, kind and name.
	// +optional
	// +listType=atomic
	ResourceRefs []CompositeResourceRef `json:"resourceRefs,omitempty"`
}

// CompositeResourceRef names an object in the composite's namespace.
type CompositeResourceRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
}
