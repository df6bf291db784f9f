// Package index names the cache indexes that several controllers share.
package index

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Controller indexes the managed resource kinds (mr.Setup registers it for
// each) and PublicHostnames (publichostname.Index) by the UID of the object
// that controls them, so a source finds what it made without listing, and
// matching, every resource of its namespace on each reconcile.
const Controller = "tunnels.cloudflare.com/controller-uid"

// ControllerUID is Controller's value: the controller's UID, if any.
func ControllerUID(o client.Object) []string {
	if c := metav1.GetControllerOf(o); c != nil {
		return []string{string(c.UID)}
	}
	return nil
}

// Controlled lists, with MatchingFields, the objects controlled by uid.
func Controlled(uid string) client.MatchingFields {
	return client.MatchingFields{Controller: uid}
}
