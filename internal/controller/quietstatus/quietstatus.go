// Package quietstatus keeps the provider from writing status that did not
// change. crossplane-runtime's managed reconciler writes a managed
// resource's status at the end of every reconcile, and so every poll: at
// thousands of resources those writes, each one an API server request and
// an etcd write that wakes every watcher, were most of the provider's
// steady-state work.
//
// The Client wraps a controller-runtime client so that Status().Update and
// Status().Patch (merge patch) are skipped when the object's cached copy at
// the same resourceVersion already has the same status (SameStatus). The
// object is then left as a successful write would leave it: the cached
// object, which is what the API server holds at that resourceVersion and
// would have answered.
//
// A write whose object is at another resourceVersion than the cache's is
// always sent: the API server answers it (a conflict, if the object moved
// on). A skip from a cache that lags behind the API server loses nothing:
// the object changed since, so its watch event brings the change into the
// cache and reconciles the object again, and that reconcile writes against
// the new version.
package quietstatus

import (
	"context"
	"reflect"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Counts are a Client's status writes: those sent to the API server and
// those skipped because nothing changed.
type Counts struct {
	Written int64
	Skipped int64
}

// Client is a client whose status writes that change nothing are skipped.
type Client struct {
	client.Client
	// cache is the informer cache the controllers read from: the copy a
	// write is compared with.
	cache   client.Reader
	written atomic.Int64
	skipped atomic.Int64
}

// New wraps c: status writes are compared with cache, the reader c's
// controllers read the objects they write from (a manager's cache).
func New(c client.Client, cache client.Reader) *Client {
	return &Client{Client: c, cache: cache}
}

// Counts returns the status writes so far.
func (c *Client) Counts() Counts {
	return Counts{Written: c.written.Load(), Skipped: c.skipped.Load()}
}

// Status returns the status writer that skips writes that change nothing.
func (c *Client) Status() client.SubResourceWriter {
	return &statusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

// SubResource("status") is Status(): the same writes, skipped the same way.
func (c *Client) SubResource(sub string) client.SubResourceClient {
	inner := c.Client.SubResource(sub)
	if sub != "status" {
		return inner
	}
	return struct {
		client.SubResourceReader
		client.SubResourceWriter
	}{inner, &statusWriter{SubResourceWriter: inner, c: c}}
}

type statusWriter struct {
	client.SubResourceWriter
	c *Client
}

func (w *statusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if len(opts) == 0 && w.c.unchanged(ctx, obj) {
		return nil
	}
	w.c.written.Add(1)
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

// Patch skips only a merge patch: obj is then the whole object as the
// caller wants it, so comparing its status with the cache's says whether
// the patch changes anything. Other patch types are sent as they are.
func (w *statusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if len(opts) == 0 && patch.Type() == types.MergePatchType && w.c.unchanged(ctx, obj) {
		return nil
	}
	w.c.written.Add(1)
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// unchanged reports whether writing obj's status would change nothing: the
// cache holds obj at the same resourceVersion with the same status. When
// it does, obj is set to the cached object, as the write would have left
// it. Anything it cannot tell (no resourceVersion, an unstructured object,
// a cache miss, options such as a dry run) is a write.
func (c *Client) unchanged(ctx context.Context, obj client.Object) bool {
	rv := obj.GetResourceVersion()
	if rv == "" {
		return false
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		// The manager's client does not read unstructured objects from
		// the cache.
		return false
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	cached, ok := reflect.New(t.Elem()).Interface().(client.Object)
	if !ok {
		return false
	}
	if err := c.cache.Get(ctx, client.ObjectKeyFromObject(obj), cached); err != nil {
		return false
	}
	if cached.GetResourceVersion() != rv {
		return false
	}
	same, err := SameStatus(cached, obj)
	if err != nil || !same {
		return false
	}
	// TypeMeta as the caller had it; everything else as the API server
	// holds it.
	gvk := obj.GetObjectKind().GroupVersionKind()
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(cached).Elem())
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	c.skipped.Add(1)
	return true
}

// SameStatus reports whether a and b have the same status, compared as the
// API server stores them: both are converted to their unstructured (JSON)
// form first, so times are compared at the seconds they are stored with and
// an empty field equals an omitted one. A condition's lastTransitionTime is
// not compared: when its type, status, reason, message and
// observedGeneration are the same, nothing transitioned, and the stored time
// is the right one. (crossplane-runtime's SetConditions keeps the time of an
// unchanged condition, so for crossplane conditions this changes nothing;
// it makes a controller that builds its conditions afresh quiet too.)
func SameStatus(a, b runtime.Object) (bool, error) {
	if sameStatusStructs(a, b) {
		// Equal as Go values is equal as stored. It is the common case
		// (a poll that changed nothing), and comparing the structs costs a
		// fraction of converting both objects whole: at 3,000 managed
		// resources polled every minute the conversions were 8% of the
		// provider's steady CPU.
		return true, nil
	}
	sa, err := status(a)
	if err != nil {
		return false, err
	}
	sb, err := status(b)
	if err != nil {
		return false, err
	}
	return equality.Semantic.DeepEqual(sa, sb), nil
}

// asStored is apimachinery's semantic equality with metav1.Time compared at
// the whole second the API server stores it with: Cloudflare's times carry
// fractions (a route's creation time, read back every poll), and a cached
// object's never do.
var asStored = func() conversion.Equalities {
	e := equality.Semantic.Copy()
	if err := e.AddFunc(func(a, b metav1.Time) bool {
		return a.UTC().Truncate(time.Second).Equal(b.UTC().Truncate(time.Second))
	}); err != nil {
		panic(err)
	}
	return e
}()

// sameStatusStructs reports whether a and b are structs of one type whose
// Status fields are equal as stored (asStored: times at the second, nil and
// empty lists alike, as the unstructured comparison treats them). False
// says only that the fast comparison cannot tell.
func sameStatusStructs(a, b runtime.Object) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Pointer || vb.Kind() != reflect.Pointer || va.Type() != vb.Type() || va.IsNil() || vb.IsNil() {
		return false
	}
	if va.Elem().Kind() != reflect.Struct {
		return false
	}
	sa, sb := va.Elem().FieldByName("Status"), vb.Elem().FieldByName("Status")
	if !sa.IsValid() || !sa.CanInterface() {
		return false
	}
	return asStored.DeepEqual(sa.Interface(), sb.Interface())
}

// status is obj's status in unstructured form, without its conditions'
// lastTransitionTimes.
func status(obj runtime.Object) (map[string]any, error) {
	var u map[string]any
	if un, ok := obj.(runtime.Unstructured); ok {
		u = runtime.DeepCopyJSON(un.UnstructuredContent())
	} else {
		var err error
		if u, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	s, _, err := unstructured.NestedMap(u, "status")
	if err != nil {
		return nil, err
	}
	if conds, ok := s["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				delete(m, "lastTransitionTime")
			}
		}
	}
	return s, nil
}

// Manager returns mgr with its client wrapped (New, compared with mgr's
// cache): controllers set up with it write status only when it changed.
func Manager(mgr manager.Manager) manager.Manager {
	return &quietManager{Manager: mgr, client: New(mgr.GetClient(), mgr.GetCache())}
}

// ClientOf is the quiet client of a manager Manager returned, nil for any
// other manager.
func ClientOf(mgr manager.Manager) *Client {
	if m, ok := mgr.(*quietManager); ok {
		return m.client
	}
	return nil
}

type quietManager struct {
	manager.Manager
	client *Client
}

func (m *quietManager) GetClient() client.Client { return m.client }
