package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Which namespaces may use a shared object.
const (
	NamespacesFromSame     = "Same"
	NamespacesFromAll      = "All"
	NamespacesFromSelector = "Selector"
)

// AllowedNamespaces are the namespaces besides its own that may use an
// object (a CloudflareTunnel's sources, an AccessPolicy's applications), as
// a Gateway listener's allowedRoutes.namespaces says for routes.
// +kubebuilder:validation:XValidation:rule="self.from == 'Selector' ? has(self.selector) : !has(self.selector)",message="selector is set exactly when from is Selector"
type AllowedNamespaces struct {
	// From: Same (its own namespace only), All, or Selector.
	// +kubebuilder:validation:Enum=Same;All;Selector
	// +kubebuilder:default=Same
	From string `json:"from"`
	// Selector of the namespaces allowed besides its own, when from is
	// Selector.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}
