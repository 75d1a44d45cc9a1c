//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// specEnv is what every spec of this suite works with: the lab, the config,
// a namespace of its own and the artifacts folder.
type specEnv struct {
	// finished: finish ran (it runs once per environment).
	finished  bool
	name      string
	cfg       *framework.Config
	lab       *framework.Lab
	artifacts string
	ns        string
	timeline  *framework.Timeline
	cleanups  []func(context.Context)
}

// newSpecEnv checks the common inputs and creates the spec's namespace.
func newSpecEnv(ctx context.Context, name string, cfg *framework.Config, lab *framework.Lab, artifacts string) *specEnv {
	Expect(lab).NotTo(BeNil(), "Invalid argument. Lab can't be nil when calling %s spec", name)
	Expect(cfg).NotTo(BeNil(), "Invalid argument. E2EConfig can't be nil when calling %s spec", name)
	ns, err := framework.CreateNamespace(ctx, lab.Karmada, name)
	Expect(err).NotTo(HaveOccurred())
	return &specEnv{name: name, cfg: cfg, lab: lab, artifacts: artifacts, ns: ns}
}

func (e *specEnv) consistently(ctx context.Context, f interface{}) AsyncAssertion {
	return Consistently(f).WithContext(ctx).WithTimeout(e.cfg.Timeout(e.name, "consistently")).WithPolling(e.cfg.Polling(e.name, "consistently"))
}

// deployWithPolicy creates a Deployment and its PropagationPolicy.
func (e *specEnv) deployWithPolicy(ctx context.Context, name string, replicas int32, in framework.PolicyInput) {
	k := e.lab.Karmada
	_, err := k.Kube().AppsV1().Deployments(e.ns).Create(ctx, framework.NewDeployment(e.ns, name, replicas), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	in.Namespace, in.Name, in.Target = e.ns, name, name
	_, err = k.Karmada().PolicyV1alpha1().PropagationPolicies(e.ns).Create(ctx, framework.NewPropagationPolicy(in), metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// waitRoom waits until Karmada's scheduler sees room for replicas of the workload
// on every cluster, enough for a division over two (framework.WaitForClusterRoom).
func (e *specEnv) waitRoom(ctx context.Context, clusters []string, replicas int64) {
	framework.WaitForClusterRoom(ctx, framework.WaitForClusterRoomInput{
		Lab: e.lab, Clusters: clusters, Replicas: replicas, Requests: framework.WorkloadRequests,
	}, e.cfg.GetIntervals(e.name, "wait-available")...)
}

// waitPlaced waits until the Deployment is healthy in its binding and
// Available on every scheduled cluster, and returns those clusters.
func (e *specEnv) waitPlaced(ctx context.Context, name string) []string {
	return framework.WaitForDeploymentPlaced(ctx, framework.WaitForDeploymentPlacedInput{Lab: e.lab, Namespace: e.ns, Name: name},
		e.cfg.GetIntervals(e.name, "wait-available")...)
}

// waitMovedAway waits until no replica of the Deployment is scheduled to from,
// it is Available on every scheduled cluster, and returns those clusters.
func (e *specEnv) waitMovedAway(ctx context.Context, name, from string) []string {
	clusters := framework.WaitForDeploymentMovedAway(ctx, framework.WaitForDeploymentMovedAwayInput{
		Lab: e.lab, Namespace: e.ns, Name: name, From: from,
	}, e.cfg.GetIntervals(e.name, "wait-failover")...)
	if e.timeline != nil {
		e.timeline.Mark("Available away from " + from)
	}
	return clusters
}

// history reads the binding's failoverHistory.
func (e *specEnv) history(ctx context.Context, name string) []workv1alpha2.FailoverHistoryItem {
	rb, err := framework.GetBinding(ctx, e.lab.Karmada, e.ns, framework.BindingName(name, "Deployment"))
	Expect(err).NotTo(HaveOccurred())
	return rb.Status.FailoverHistory
}

// memberMeta returns the labels and annotations of the Deployment in a
// member, or nil maps if it is not there.
func (e *specEnv) memberMeta(ctx context.Context, cluster, name string) (map[string]string, map[string]string) {
	d, err := e.lab.Member(cluster).Kube().AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	Expect(err).NotTo(HaveOccurred())
	return d.Labels, d.Annotations
}

// taint adds an untolerated NoExecute taint to a cluster and registers its removal.
func (e *specEnv) taint(ctx context.Context, cluster, key string) {
	Expect(e.lab.TaintCluster(ctx, cluster, key, "e2e", false)).To(Succeed())
	e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = e.lab.TaintCluster(ctx, cluster, key, "", true) })
}

// finish runs the cleanups, writes the timeline, dumps on failure, deletes the
// namespace and waits for every member to be Ready without NoExecute taints.
func (e *specEnv) finish(ctx context.Context) {
	// A spec skipped in its BeforeEach has no environment of its own: none yet,
	// or the one of the container's spec before it, finished already.
	if e == nil || e.finished {
		return
	}
	e.finished = true
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i](ctx)
	}
	if e.timeline != nil {
		Expect(e.timeline.Write(e.artifacts, e.ns+"-timeline.svg")).To(Succeed())
	}
	if CurrentSpecReport().Failed() {
		_ = e.lab.DumpResources(ctx, e.ns, filepath.Join(e.artifacts, e.ns))
	}
	Expect(framework.DeleteNamespace(ctx, e.lab.Karmada, e.ns)).To(Succeed())
	for _, m := range e.lab.MemberNames() {
		framework.WaitForClusterReady(ctx, framework.WaitForClusterReadyInput{Lab: e.lab, Cluster: m},
			e.cfg.GetIntervals(e.name, "wait-cluster-ready")...)
		framework.WaitForClusterUntainted(ctx, framework.WaitForClusterUntaintedInput{Lab: e.lab, Cluster: m},
			e.cfg.GetIntervals(e.name, "wait-cluster-ready")...)
	}
}

// finishTimeout bounds an AfterEach that may wait for a member to come back.
const finishTimeout = 5 * time.Minute

// skipUnsupported skips the spec when the lab's provider cannot inject fault, saying why.
func skipUnsupported(l *framework.Lab, fault labapi.Fault) {
	if err := labapi.Supports(l.Provider, fault); err != nil {
		Skip(err.Error())
	}
}

// skipWithoutFlinkRunner skips a Flink spec on a lab without the lab's FlinkDeployment runner.
// Flink's REST API is reached on any provider (Lab.ReadFlinkStatus); what the specs still need
// from the hermetic lab is the job's committed output on this host (lab flink verify) and the
// runner's faults (a JobManager pod loss is a runner restart there).
func skipWithoutFlinkRunner(l *framework.Lab) {
	if !l.Provider.Info().FlinkRunner {
		Skip(fmt.Sprintf("the %s lab's members run no FlinkDeployment runner (the Flink specs verify the job's committed output on this host and restart the runner); on kind with images pulled, apply the rendered flink-demo.yaml (docs/KIND.md)", l.ProviderName()))
	}
}

// failPods makes the pods matching selector unready in cluster (heal: ready again).
func failPods(ctx context.Context, l *framework.Lab, cluster, namespace, selector string, heal bool) error {
	_, err := l.Provider.FailPods(ctx, cluster, namespace, selector, heal)
	return err
}

// deploymentVersions records the labels and annotations of every version of a
// Deployment on some members, from a watch started before a failover: what
// Karmada created and each change since, so a value present only for a while
// (the preserved state, while the failover is in progress) is not missed.
type deploymentVersions struct {
	mu       sync.Mutex
	versions map[string][]objectMeta
}

// objectMeta is the labels and annotations of one version of an object.
type objectMeta struct {
	labels, annotations map[string]string
}

// watchDeploymentLabels starts watching Deployment name on members until the
// spec ends.
func (e *specEnv) watchDeploymentLabels(ctx context.Context, members []string, name string) *deploymentVersions {
	v := &deploymentVersions{versions: map[string][]objectMeta{}}
	for _, m := range members {
		w, err := e.lab.Member(m).Kube().AppsV1().Deployments(e.ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
		Expect(err).NotTo(HaveOccurred(), "watching Deployments on %s", m)
		e.cleanups = append(e.cleanups, func(context.Context) { w.Stop() })
		go func() {
			for ev := range w.ResultChan() {
				if d, ok := ev.Object.(*appsv1.Deployment); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					v.mu.Lock()
					v.versions[m] = append(v.versions[m], objectMeta{labels: maps.Clone(d.Labels), annotations: maps.Clone(d.Annotations)})
					v.mu.Unlock()
				}
			}
		}()
	}
	return v
}

// created returns the labels and annotations the Deployment had when it
// appeared on member (nil before that).
func (v *deploymentVersions) created(member string) *objectMeta {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.versions[member]) == 0 {
		return nil
	}
	return &v.versions[member][0]
}

// everHad tells whether any version of the Deployment on member had label key.
func (v *deploymentVersions) everHad(member, key string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, version := range v.versions[member] {
		if _, ok := version.labels[key]; ok {
			return true
		}
	}
	return false
}

// clustersExcept returns clusters without cluster, in their order.
func clustersExcept(clusters []string, cluster string) []string {
	var others []string
	for _, c := range clusters {
		if c != cluster {
			others = append(others, c)
		}
	}
	return others
}
