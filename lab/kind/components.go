package kind

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// The kind lab's record (lab.Component): its clusters (one node container each, with the
// host ports kind publishes), then every Deployment and StatefulSet the lab put in them:
// Karmada's control plane and the checkpoint store on the host cluster, the runner, the
// restore webhook, Kyverno and the operators on the members. Status and the faults that
// stop and start a component (lab.ComponentFaults) go over it.

// systemNamespaces hold what kind itself runs, not the lab's components.
var systemNamespaces = map[string]bool{"kube-system": true, "local-path-storage": true}

// rolloutTimeout is how long a component of the kind lab may take to roll out.
const rolloutTimeout = 3 * time.Minute

// clusterComponents are the lab's kind clusters, with the host ports of their node.
func (l *Lab) clusterComponents() []lab.Component {
	image := l.node.Image
	if st, err := l.State(); image == "" && err == nil {
		// A later command (lab restore) records again what lab up chose.
		for _, c := range st.Components {
			if c.Kind == lab.KindCluster {
				image = c.Image
			}
		}
	}
	var cs []lab.Component
	for _, name := range ClusterNames(l.Cfg) {
		c := lab.Component{Name: name, Kind: lab.KindCluster, Cluster: name, Image: image,
			Address: "kubeconfig " + l.kubeconfigOf(name), StartTimeout: lab.Timeout(rolloutTimeout)}
		if name != HostCluster {
			c.Member = name
		}
		if kc, err := ClusterConfig(l.Cfg, name, l.node); err == nil {
			c.Ports = append(c.Ports, int(kc.Networking.APIServerPort))
			for _, pm := range kc.Nodes[0].ExtraPortMappings {
				c.Ports = append(c.Ports, int(pm.HostPort))
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// workloadName is the record's name of a Deployment or StatefulSet: Karmada's own by their
// names, the store as lab.CheckpointStoreComponent, a member's as member/name.
func workloadName(cluster, namespace, name string) string {
	switch {
	case cluster == HostCluster && namespace == "karmada-system":
		return name
	case cluster == HostCluster && namespace == checkpointStoreNamespace:
		return lab.CheckpointStoreComponent
	case cluster == HostCluster:
		return namespace + "/" + name
	}
	return lab.MemberComponent(cluster, name)
}

// components reads the running lab's record from its clusters: clusterComponents, then
// each cluster's Deployments and StatefulSets. A cluster that does not answer is listed
// without what runs in it.
func (l *Lab) components(ctx context.Context) []lab.Component {
	cs := l.clusterComponents()
	for _, cluster := range ClusterNames(l.Cfg) {
		k, err := l.kubeOn(cluster)
		if err != nil {
			continue
		}
		member := ""
		if cluster != HostCluster {
			member = cluster
		}
		record := func(kind lab.ComponentKind, meta metav1.ObjectMeta, pod []containerSpec) {
			c := lab.Component{Name: workloadName(cluster, meta.Namespace, meta.Name), Kind: kind, Member: member,
				Cluster: cluster, Namespace: meta.Namespace, StartTimeout: lab.Timeout(rolloutTimeout)}
			if c.Name == lab.CheckpointStoreComponent {
				c.Process = meta.Name
			}
			if len(pod) > 0 {
				c.Image, c.Args = pod[0].image, pod[0].args
				c.Probe = pod[0].probe
			}
			cs = append(cs, c)
		}
		deps, err := k.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, d := range deps.Items {
			if !systemNamespaces[d.Namespace] {
				record(lab.KindDeployment, d.ObjectMeta, containers(d.Spec.Template.Spec.Containers))
			}
		}
		sets, err := k.cs.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, s := range sets.Items {
			if !systemNamespaces[s.Namespace] {
				record(lab.KindStatefulSet, s.ObjectMeta, containers(s.Spec.Template.Spec.Containers))
			}
		}
	}
	return cs
}

// recorded is the running lab's record, or, when it has none, the one its clusters give.
func (l *Lab) recorded(ctx context.Context) []lab.Component {
	if st, err := l.State(); err == nil && len(st.Components) > 0 {
		return st.Components
	}
	return l.components(ctx)
}

// find is the component name of the record; the host cluster, which runs Karmada's
// control plane, is refused: its components stop and start one by one.
func (l *Lab) find(ctx context.Context, name string) (lab.Component, error) {
	c, err := lab.Find(l.recorded(ctx), name)
	if err == nil && c.Kind == lab.KindCluster && c.Member == "" {
		err = fmt.Errorf("%s runs Karmada's control plane: stop and start one of its components instead", name)
	}
	return c, err
}

// StopComponent stops the component name of the record (lab.Components): a member's node
// container (docker kill, or docker stop without kill), or a Deployment scaled to zero,
// its pods deleted at once with kill, and waits until its pods are gone.
func (l *Lab) StopComponent(ctx context.Context, name string, kill bool) error {
	c, err := l.find(ctx, name)
	if err != nil {
		return err
	}
	switch c.Kind {
	case lab.KindCluster:
		verb := "kill"
		if !kill {
			verb = "stop"
		}
		_, err := l.run(ctx, "docker-"+verb+"-"+name, "docker", verb, NodeContainer(name))
		return err
	case lab.KindDeployment:
		k, err := l.kubeOn(c.Cluster)
		if err != nil {
			return err
		}
		d, err := k.cs.AppsV1().Deployments(c.Namespace).Get(ctx, processName(c), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := scaleDeployment(ctx, k.cs, c.Namespace, d.Name, 0, nil); err != nil {
			return err
		}
		sel := metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)}
		if kill {
			if err := k.cs.CoreV1().Pods(c.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}, sel); err != nil {
				return err
			}
		}
		if err := waitPodsGone(ctx, k.cs, c.Namespace, sel); err != nil {
			return fmt.Errorf("%s scaled to 0: %w", name, err)
		}
		return nil
	}
	return fmt.Errorf("stopping %s (a %s) on the kind lab: %w", name, c.Kind, lab.ErrUnsupported)
}

// StartComponent starts the component name of the record (lab.Components): a member's node
// container, then waits for its API server; a Deployment scaled back to one replica (for
// karmada-controller-manager with o.Gates, or the lab's feature gates), then waits until it
// rolled out.
func (l *Lab) StartComponent(ctx context.Context, name string, o lab.StartOptions) error {
	c, err := l.find(ctx, name)
	if err != nil {
		return err
	}
	switch c.Kind {
	case lab.KindCluster:
		if _, err := l.run(ctx, "docker-start-"+name, "docker", "start", NodeContainer(name)); err != nil {
			return err
		}
		return l.waitAPI(ctx, l.kubeconfigOf(name), rolloutTimeout)
	case lab.KindDeployment:
		k, err := l.kubeOn(c.Cluster)
		if err != nil {
			return err
		}
		var change func(*appsv1.Deployment)
		if name == lab.ControllerManagerComponent {
			flag := "--feature-gates=" + config.FeatureGatesFlag(config.FeatureGates(l.Cfg.Karmada, o.Gates))
			change = func(d *appsv1.Deployment) { setArg(&d.Spec.Template.Spec.Containers[0], flag) }
		}
		if err := scaleDeployment(ctx, k.cs, c.Namespace, processName(c), 1, change); err != nil {
			return err
		}
		return waitRolledOut(ctx, k.cs, c.Namespace, processName(c))
	}
	return fmt.Errorf("starting %s (a %s) on the kind lab: %w", name, c.Kind, lab.ErrUnsupported)
}

// processName is the Kubernetes name of c (a Deployment's), when not its record name.
func processName(c lab.Component) string {
	if c.Process != "" {
		return c.Process
	}
	if i := strings.LastIndex(c.Name, "/"); i >= 0 {
		return c.Name[i+1:]
	}
	return c.Name
}

// containerSpec is what the record keeps of a pod's container.
type containerSpec struct {
	image string
	args  []string
	probe string
}

// containers are what the record keeps of a pod template's containers: image, command
// and args, and the readiness probe's HTTP path and port.
func containers(list []corev1.Container) []containerSpec {
	var out []containerSpec
	for _, c := range list {
		s := containerSpec{image: c.Image, args: append(append([]string{}, c.Command...), c.Args...)}
		if p := c.ReadinessProbe; p != nil && p.HTTPGet != nil {
			scheme := strings.ToLower(string(p.HTTPGet.Scheme))
			if scheme == "" {
				scheme = "http"
			}
			s.probe = fmt.Sprintf("%s://<pod>:%s%s", scheme, p.HTTPGet.Port.String(), p.HTTPGet.Path)
		}
		out = append(out, s)
	}
	return out
}
