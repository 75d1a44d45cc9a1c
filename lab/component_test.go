package lab

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

// componentProvider records the components stopped and started, and refuses the faults
// of its Info.
type componentProvider struct {
	Provider
	unsupported map[Fault]string
	calls       []string
}

func (p *componentProvider) Name() config.Provider { return config.ProviderKind }
func (p *componentProvider) Info() Info            { return Info{Unsupported: p.unsupported} }
func (p *componentProvider) StopComponent(_ context.Context, name string, kill bool) error {
	p.calls = append(p.calls, "stop "+name+" kill="+strconv.FormatBool(kill))
	return nil
}
func (p *componentProvider) StartComponent(_ context.Context, name string, o StartOptions) error {
	p.calls = append(p.calls, "start "+name+" gates="+strconv.Itoa(len(o.Gates)))
	return nil
}

// TestComponentFaults: each row of ComponentFaults stops its component (a crash where the
// row says so) and starts it again; a fault of a member needs the member, a fault of the
// lab refuses one; a fault the lab cannot inject is refused before anything stops.
func TestComponentFaults(t *testing.T) {
	ctx := context.Background()
	p := &componentProvider{unsupported: map[Fault]string{FaultRestartRunner: "no runner"}}
	if err := Inject(ctx, p, FaultStopCluster, "member2"); err != nil {
		t.Fatal(err)
	}
	if err := Heal(ctx, p, FaultKillController, "", StartOptions{Gates: map[string]bool{"FailoverHistory": false}}); err != nil {
		t.Fatal(err)
	}
	if err := Inject(ctx, p, FaultStopCheckpointStore, ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"stop member2 kill=true", "start karmada-controller-manager gates=1", "stop checkpoint-store kill=false"}
	if strings.Join(p.calls, ";") != strings.Join(want, ";") {
		t.Fatalf("calls %q, want %q", p.calls, want)
	}
	for _, tc := range []struct {
		fault  Fault
		member string
		want   string
	}{
		{FaultStopCluster, "", "name the member"},
		{FaultKillController, "member1", "not a fault of a member"},
		{FaultPartition, "member1", "not a fault that stops a component"},
		{FaultRestartRunner, "member1", "no runner"},
	} {
		p.calls = nil
		err := Inject(ctx, p, tc.fault, tc.member)
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(p.calls) > 0 {
			t.Errorf("%s %q: err %v, calls %v; want an error with %q and nothing stopped", tc.fault, tc.member, err, p.calls, tc.want)
		}
	}
	if err := Inject(ctx, p, FaultRestartRunner, "member1"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("an unsupported fault: %v, want ErrUnsupported", err)
	}
	seen := map[Fault]bool{}
	for _, f := range ComponentFaults {
		if seen[f.Fault] || f.Doc == "" {
			t.Errorf("%s: listed twice or without a doc", f.Fault)
		}
		seen[f.Fault] = true
	}
}

func TestFindOwnedAndPorts(t *testing.T) {
	cs := []Component{
		{Name: "karmada-apiserver", Kind: KindProcess, Ports: []int{1}},
		{Name: "member1", Kind: KindCluster, Member: "member1"},
		{Name: "member1/kube-apiserver", Kind: KindProcess, Member: "member1", Parent: "member1", Ports: []int{2}},
		{Name: "member1/lab-link", Kind: KindProcess, Ports: []int{1}},
		{Name: "member1/flink-runner", Kind: KindProcess, Member: "member1"},
	}
	if _, err := Find(cs, "member2"); err == nil || !strings.Contains(err.Error(), "karmada-apiserver, member1") {
		t.Errorf("an unknown component: %v, want the error to list the record", err)
	}
	if o := Owned(cs, "member1"); len(o) != 1 || o[0].Name != "member1/flink-runner" {
		t.Errorf("owned %v: want only the runner (not the cluster, kwokctl's processes or the link)", o)
	}
	if d := DuplicatePorts(cs); len(d) != 1 || len(d[1]) != 2 {
		t.Errorf("duplicates %v", d)
	}
	l, err := net.Listen("tcp", config.Host+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	err = BusyPorts([]Component{{Name: "etcd", Ports: []int{port}}})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(port)+" (etcd)") {
		t.Errorf("a busy port: %v", err)
	}
}
