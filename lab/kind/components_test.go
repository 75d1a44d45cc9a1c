package kind

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/karmada-failover/lab/lab"
)

// TestRecordNames: the kind lab's record names Karmada's Deployments as the hermetic lab
// names its processes, the store as lab.CheckpointStoreComponent and a member's as
// member/name, so that every row of lab.ComponentFaults finds its component on both labs.
func TestRecordNames(t *testing.T) {
	for _, tc := range []struct{ cluster, ns, name, want string }{
		{HostCluster, "karmada-system", "karmada-controller-manager", lab.ControllerManagerComponent},
		{HostCluster, "karmada-system", "karmada-scheduler", lab.SchedulerComponent},
		{HostCluster, checkpointStoreNamespace, "seaweedfs", lab.CheckpointStoreComponent},
		{HostCluster, "cert-manager", "cert-manager", "cert-manager/cert-manager"},
		{"member2", "flink-runner", "flink-runner", lab.MemberComponent("member2", lab.RunnerComponent)},
	} {
		got := workloadName(tc.cluster, tc.ns, tc.name)
		if got != tc.want {
			t.Errorf("%s %s/%s: %q, want %q", tc.cluster, tc.ns, tc.name, got, tc.want)
		}
		c := lab.Component{Name: got}
		if got == lab.CheckpointStoreComponent {
			c.Process = tc.name
		}
		if processName(c) != tc.name {
			t.Errorf("%s: object name %q, want %q", got, processName(c), tc.name)
		}
	}
}

func TestRecordClustersAndContainers(t *testing.T) {
	l, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	cs := l.clusterComponents()
	if len(cs) != 1+l.Cfg.Members {
		t.Fatalf("%d clusters", len(cs))
	}
	if cs[0].Name != HostCluster || cs[0].Member != "" || cs[1].Member != "member1" {
		t.Errorf("clusters %+v: want the host (no member) first, then the members owning themselves", cs)
	}
	if d := lab.DuplicatePorts(cs); len(d) > 0 {
		t.Errorf("ports declared twice: %v", d)
	}
	host := map[int]bool{}
	for _, p := range cs[0].Ports {
		host[p] = true
	}
	if !host[HostAPIServerPort] || !host[KarmadaAPIServerPort] || !host[S3Port] {
		t.Errorf("host cluster ports %v: want its API server's, Karmada's and the store's", cs[0].Ports)
	}
	got := containers([]corev1.Container{{Image: "img", Command: []string{"/bin/x"}, Args: []string{"--a"},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8443), Scheme: corev1.URISchemeHTTPS}}}}})
	if len(got) != 1 || got[0].image != "img" || len(got[0].args) != 2 || got[0].probe != "https://<pod>:8443/readyz" {
		t.Errorf("containers %+v", got)
	}
}
