package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// namespacePrefix marks the namespaces the suite makes its backends in.
const namespacePrefix = "gateway-conformance-"

// echoPorts are the ports the suite's echo server listens on unless its
// environment says otherwise (HTTP, h2c, HTTPS): a Service's target port
// names one of them.
var echoPorts = map[int32]string{3000: "HTTP_PORT", 3001: "H2C_PORT", 8443: "HTTPS_PORT"}

// backends stands in for the kubelet on a cluster whose nodes run no
// containers: each running pod of the suite's namespaces whose container is
// the suite's echo server runs as a local process, with the environment its
// pod spec gives, and the simulator's edge is told which local address each
// Service port leads to.
type backends struct {
	kube    kubernetes.Interface
	echo    string // the echo-basic binary
	sim     string // the simulator's base URL
	domain  string // the cluster domain origins are named in
	workDir string
	logf    func(string, ...any)

	mu      sync.Mutex
	running map[types.UID]*echoProcess
	origins map[string]string
	// refused is the last reason each pod could not be served, said once.
	refused map[types.UID]string
}

type echoProcess struct {
	pod   types.NamespacedName
	cmd   *exec.Cmd
	ports map[int32]int // the pod's port → the local port serving it
}

func newBackends(kube kubernetes.Interface, echo, sim, domain, workDir string, logf func(string, ...any)) *backends {
	return &backends{kube: kube, echo: echo, sim: sim, domain: domain, workDir: workDir, logf: logf, running: map[types.UID]*echoProcess{}, refused: map[types.UID]string{}}
}

// run keeps the processes and the edge's origins in step with the cluster
// until ctx ends, then stops every process.
func (b *backends) run(ctx context.Context, every time.Duration) {
	defer b.stopAll()
	for {
		if err := b.sync(ctx); err != nil && ctx.Err() == nil {
			b.logf("backends: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (b *backends) sync(ctx context.Context) error {
	c, err := b.list(ctx)
	if err != nil {
		return err
	}
	pods := c.pods
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[types.UID]bool{}
	for i := range pods {
		p := &pods[i]
		if !servable(p) {
			continue
		}
		seen[p.UID] = true
		if _, ok := b.running[p.UID]; ok {
			continue
		}
		if _, failed := b.refused[p.UID]; failed {
			// A pod's spec does not change: what failed once fails again.
			continue
		}
		proc, err := b.start(ctx, p)
		if apierrors.IsNotFound(err) {
			continue // a Secret it mounts is not made yet
		}
		if err != nil {
			b.refused[p.UID] = err.Error()
			b.logf("backends: pod %s/%s is not served: %v", p.Namespace, p.Name, err)
			continue
		}
		b.running[p.UID] = proc
	}
	for uid, proc := range b.running {
		if !seen[uid] {
			proc.stop()
			delete(b.running, uid)
		}
	}
	return b.publish(ctx, originsOf(c, b.running, b.domain))
}

// cluster is what the origins are computed from.
type cluster struct {
	pods     []corev1.Pod
	services []corev1.Service
	slices   []discoveryv1.EndpointSlice
}

func (b *backends) list(ctx context.Context) (cluster, error) {
	var c cluster
	nss, err := b.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return c, err
	}
	for _, ns := range nss.Items {
		if !strings.HasPrefix(ns.Name, namespacePrefix) {
			continue
		}
		pl, err := b.kube.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return c, err
		}
		sl, err := b.kube.CoreV1().Services(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return c, err
		}
		el, err := b.kube.DiscoveryV1().EndpointSlices(ns.Name).List(ctx, metav1.ListOptions{})
		if err != nil {
			return c, err
		}
		c.pods, c.services, c.slices = append(c.pods, pl.Items...), append(c.services, sl.Items...), append(c.slices, el.Items...)
	}
	return c, nil
}

// servable: a running pod, not on its way out, whose container is the
// suite's HTTP (or gRPC) echo server. Its TCP and UDP echo servers are for
// routes this provider does not serve.
func servable(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || len(p.Spec.Containers) == 0 ||
		!strings.Contains(p.Spec.Containers[0].Image, "echo-basic") {
		return false
	}
	for _, e := range p.Spec.Containers[0].Env {
		if e.Name == "TCP_ECHO_SERVER" || e.Name == "UDP_ECHO_SERVER" {
			return false
		}
	}
	return true
}

// start runs the pod's echo server on free local ports, with the pod's
// environment: literal values, the pod's name and namespace, and Secret
// volumes written to a directory of its own.
func (b *backends) start(ctx context.Context, p *corev1.Pod) (*echoProcess, error) {
	c := p.Spec.Containers[0]
	mounts, err := b.secretMounts(ctx, p)
	if err != nil {
		return nil, err
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		v, ok := envValue(p, e)
		if !ok {
			return nil, fmt.Errorf("env %s: only literal values and the pod's name and namespace are given", e.Name)
		}
		for from, to := range mounts {
			if strings.HasPrefix(v, from) {
				v = to + strings.TrimPrefix(v, from)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	proc := &echoProcess{pod: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, ports: map[int32]int{}}
	for port, name := range echoPorts {
		local, err := freePort()
		if err != nil {
			return nil, err
		}
		proc.ports[port] = local
		env = append(env, name+"="+strconv.Itoa(local))
	}
	logFile, err := os.Create(filepath.Join(b.workDir, p.Namespace+"_"+p.Name+".log"))
	if err != nil {
		return nil, err
	}
	proc.cmd = exec.Command(b.echo)
	proc.cmd.Env, proc.cmd.Stdout, proc.cmd.Stderr = env, logFile, logFile
	// A suite killed before its cleanup takes its backends with it.
	proc.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := proc.cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	go func() { _ = proc.cmd.Wait(); logFile.Close() }()
	if err := waitListening(proc.ports[3000], 10*time.Second); err != nil {
		proc.stop()
		return nil, err
	}
	return proc, nil
}

func envValue(p *corev1.Pod, e corev1.EnvVar) (string, bool) {
	if e.ValueFrom == nil {
		return e.Value, true
	}
	if f := e.ValueFrom.FieldRef; f != nil {
		switch f.FieldPath {
		case "metadata.name":
			return p.Name, true
		case "metadata.namespace":
			return p.Namespace, true
		}
	}
	return "", false
}

// secretMounts writes each Secret volume the container mounts into a
// directory of its own, and answers mount path → directory.
func (b *backends) secretMounts(ctx context.Context, p *corev1.Pod) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range p.Spec.Containers[0].VolumeMounts {
		for _, v := range p.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			s, err := b.kube.CoreV1().Secrets(p.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			dir := filepath.Join(b.workDir, string(p.UID), v.Name)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
			if err := writeSecretVolume(dir, s.Data, v.Secret.Items); err != nil {
				return nil, err
			}
			out[strings.TrimSuffix(m.MountPath, "/")] = dir
		}
	}
	return out, nil
}

// writeSecretVolume writes a Secret as the kubelet mounts it: each key as a
// file named after it, or only the listed keys at their paths.
func writeSecretVolume(dir string, data map[string][]byte, items []corev1.KeyToPath) error {
	files := map[string][]byte{}
	for k, v := range data {
		files[k] = v
	}
	if len(items) > 0 {
		files = map[string][]byte{}
		for _, it := range items {
			v, ok := data[it.Key]
			if !ok {
				return fmt.Errorf("the Secret has no key %s", it.Key)
			}
			files[it.Path] = v
		}
	}
	for name, v := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), v, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func (p *echoProcess) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

func (b *backends) stopAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid, p := range b.running {
		p.stop()
		delete(b.running, uid)
	}
}

// originsOf maps each Service port, as a tunnel rule names it
// (<service>.<namespace>.svc.<domain>:<port>), to the local address of the
// first running pod it leads to (by name, so the choice is stable): the
// pods its selector matches, or, for a Service without one, the pods its
// EndpointSlices' addresses are, as cluster DNS and kube-proxy would lead.
//
// A headless Service has no port of its own: its name resolves to its
// pods, so only the ports they listen on lead anywhere.
func originsOf(c cluster, running map[types.UID]*echoProcess, domain string) map[string]string {
	out := map[string]string{}
	for _, s := range c.services {
		for _, sp := range s.Spec.Ports {
			pod, port := endpointOf(c, running, s, sp)
			if pod == nil {
				continue
			}
			local, ok := running[pod.UID].ports[port]
			if !ok {
				continue
			}
			dialled := sp.Port
			if s.Spec.ClusterIP == corev1.ClusterIPNone {
				dialled = port
			}
			out[fmt.Sprintf("%s.%s.svc.%s:%d", s.Name, s.Namespace, domain, dialled)] = "127.0.0.1:" + strconv.Itoa(local)
		}
	}
	return out
}

// endpointOf is the served pod a Service port leads to, and the pod's port.
func endpointOf(c cluster, running map[types.UID]*echoProcess, s corev1.Service, sp corev1.ServicePort) (*corev1.Pod, int32) {
	var chosen *corev1.Pod
	var port int32
	consider := func(p *corev1.Pod, pp int32) {
		if running[p.UID] != nil && (chosen == nil || p.Name < chosen.Name) {
			chosen, port = p, pp
		}
	}
	if len(s.Spec.Selector) > 0 {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		for i := range c.pods {
			if p := &c.pods[i]; p.Namespace == s.Namespace && sel.Matches(labels.Set(p.Labels)) {
				consider(p, targetPort(p, sp))
			}
		}
		return chosen, port
	}
	for _, es := range c.slices {
		if es.Namespace != s.Namespace || es.Labels[discoveryv1.LabelServiceName] != s.Name {
			continue
		}
		pp := slicePort(es, sp)
		for _, ep := range es.Endpoints {
			for _, addr := range ep.Addresses {
				if p := podWithIP(c.pods, s.Namespace, addr); p != nil && pp != 0 {
					consider(p, pp)
				}
			}
		}
	}
	return chosen, port
}

// slicePort is the EndpointSlice's port of the Service port: the one of
// its name.
func slicePort(es discoveryv1.EndpointSlice, sp corev1.ServicePort) int32 {
	for _, p := range es.Ports {
		if ptr.Deref(p.Name, "") == sp.Name && p.Port != nil {
			return *p.Port
		}
	}
	return 0
}

func podWithIP(pods []corev1.Pod, ns, ip string) *corev1.Pod {
	for i := range pods {
		p := &pods[i]
		if p.Namespace != ns {
			continue
		}
		for _, pip := range p.Status.PodIPs {
			if pip.IP == ip {
				return p
			}
		}
	}
	return nil
}

// targetPort is the container port a Service port leads to.
func targetPort(p *corev1.Pod, sp corev1.ServicePort) int32 {
	switch {
	case sp.TargetPort.IntValue() != 0:
		return int32(sp.TargetPort.IntValue())
	case sp.TargetPort.StrVal != "":
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == sp.TargetPort.StrVal {
					return cp.ContainerPort
				}
			}
		}
		return 0
	}
	return sp.Port
}

// publish replaces the edge's origin map when it changed.
func (b *backends) publish(ctx context.Context, origins map[string]string) error {
	if reflect.DeepEqual(origins, b.origins) {
		return nil
	}
	body, err := json.Marshal(origins)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, b.sim+"/__sim/edge/origins", bytes.NewReader(body))
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("PUT /__sim/edge/origins: %s", res.Status)
	}
	b.origins = origins
	keys := make([]string, 0, len(origins))
	for k := range origins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.logf("backends: %d origins on the edge: %s", len(keys), strings.Join(keys, ", "))
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitListening(port int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the echo server did not listen on %d within %s: %w", port, within, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
