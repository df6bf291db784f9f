package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var cloudflareTunnels = schema.GroupVersionResource{Group: "tunnels.cloudflare.com", Version: "v1alpha1", Resource: "cloudflaretunnels"}

// connectors stands in for cloudflared, which the cluster's nodes do not
// run: a tunnel a Gateway's CloudflareTunnel made has one connected
// connector in the simulator while its cloudflared Deployment is ready, and
// none once the CloudflareTunnel is being deleted (its pods go with it), as
// cloudflared would connect and disconnect.
type connectors struct {
	kube dynamic.Interface
	sim  string
	logf func(string, ...any)
	// count is the connectors each tunnel was last given.
	count map[string]int
}

func (c *connectors) run(ctx context.Context, every time.Duration) {
	c.count = map[string]int{}
	for {
		if err := c.sync(ctx); err != nil && ctx.Err() == nil {
			c.logf("connectors: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (c *connectors) sync(ctx context.Context) error {
	list, err := c.kube.Resource(cloudflareTunnels).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, t := range list.Items {
		id, _, _ := unstructured.NestedString(t.Object, "status", "tunnelID")
		if id == "" {
			continue
		}
		want := 0
		if t.GetDeletionTimestamp() == nil && deploymentReady(t) {
			want = 1
		}
		if had, seen := c.count[id]; (seen && had == want) || (!seen && want == 0) {
			continue
		}
		if err := c.connect(ctx, id, want); err != nil {
			return fmt.Errorf("tunnel %s of %s/%s: %w", id, t.GetNamespace(), t.GetName(), err)
		}
		c.count[id] = want
		c.logf("connectors: tunnel %s of %s/%s has %d connectors", id, t.GetNamespace(), t.GetName(), want)
	}
	return nil
}

func deploymentReady(t unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(t.Object, "status", "conditions")
	for _, raw := range conds {
		cond, ok := raw.(map[string]any)
		if ok && cond["type"] == "DeploymentReady" && cond["status"] == "True" {
			return true
		}
	}
	return false
}

func (c *connectors) connect(ctx context.Context, id string, count int) error {
	body := fmt.Sprintf(`{"count": %d}`, count)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.sim+"/__sim/tunnels/"+id+"/connectors", strings.NewReader(body))
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("POST connectors: %s", res.Status)
	}
	return nil
}
