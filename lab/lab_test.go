package lab

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	karmadafake "github.com/karmada-io/karmada/pkg/generated/clientset/versioned/fake"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/steps"
)

// TestReadStateOfAnEarlierLab reads a record written before the record held the lab's
// settings (as the labs of earlier versions wrote it, both providers), and a new one.
func TestReadStateOfAnEarlierLab(t *testing.T) {
	cfg := &config.Config{Dir: t.TempDir()}
	if _, err := ReadState(cfg); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no record: %v, want os.ErrNotExist", err)
	}
	for _, old := range []string{
		`{"provider":"local","karmada":"patched","members":["member1","member2","member3"],"startedAt":"2026-12-05T15:01:29Z","ready":true,"steps":[{"name":"Starting etcd","durationNanoseconds":252775597}]}`,
		`{"provider":"kind","karmada":"patched","restore":"webhook","members":["member1","member2"],"ready":true,"startedAt":"2026-12-05T15:01:29Z"}`,
	} {
		if err := os.WriteFile(cfg.StateFile(), []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := ReadState(cfg)
		if err != nil || !st.Ready || len(st.Members) < 2 || st.FailoverHistoryLimit != 0 {
			t.Errorf("%s: %+v, %v", old, st, err)
		}
	}
	cfg = &config.Config{Dir: cfg.Dir, Provider: config.ProviderLocal, Karmada: config.FlavourPatched, Members: 2, FailoverHistoryLimit: 7, NodesPerMember: 12}
	st := NewState(cfg)
	st.Logs = []string{filepath.Join(cfg.Dir, "logs")}
	if err := WriteState(cfg, st); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(cfg)
	if err != nil || got.FailoverHistoryLimit != 7 || got.NodesPerMember != 12 || !slices.Equal(got.Members, []string{"member1", "member2"}) ||
		!slices.Equal(got.Logs, st.Logs) || got.Ready {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	if err := os.WriteFile(cfg.StateFile(), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(cfg); err == nil || !strings.Contains(err.Error(), cfg.StateFile()) {
		t.Errorf("a corrupt record: %v, want an error naming the file", err)
	}
}

func TestParseTaint(t *testing.T) {
	for in, want := range map[string]corev1.Taint{
		"lab.karmada.io/fault=true:NoExecute":                  {Key: "lab.karmada.io/fault", Value: "true", Effect: corev1.TaintEffectNoExecute},
		"cluster.karmada.io/out-of-service=shutdown:NoExecute": {Key: "cluster.karmada.io/out-of-service", Value: "shutdown", Effect: corev1.TaintEffectNoExecute},
		"k:NoSchedule": {Key: "k", Effect: corev1.TaintEffectNoSchedule},
	} {
		if got, err := ParseTaint(in); err != nil || got != want {
			t.Errorf("%s: %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"k", "k=v", ":NoExecute", "k:Evict"} {
		if _, err := ParseTaint(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestTaintCluster adds a taint, replaces it (same key and effect), keeps the others, and removes it.
func TestTaintCluster(t *testing.T) {
	other := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoSchedule}
	kc := karmadafake.NewSimpleClientset(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Spec: clusterv1alpha1.ClusterSpec{Taints: []corev1.Taint{other}}})
	ctx := context.Background()
	taints := func() []corev1.Taint {
		c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Spec.Taints
	}
	fault := corev1.Taint{Key: "lab.karmada.io/fault", Value: "a", Effect: corev1.TaintEffectNoExecute}
	if err := TaintCluster(ctx, kc, "member1", fault, false); err != nil {
		t.Fatal(err)
	}
	fault.Value = "b"
	if err := TaintCluster(ctx, kc, "member1", fault, false); err != nil {
		t.Fatal(err)
	}
	got := taints()
	if len(got) != 2 || got[0] != other || got[1].Key != fault.Key || got[1].Value != "b" || got[1].TimeAdded == nil {
		t.Fatalf("taints %+v", got)
	}
	if err := TaintCluster(ctx, kc, "member1", fault, true); err != nil {
		t.Fatal(err)
	}
	if got := taints(); len(got) != 1 || got[0] != other {
		t.Fatalf("after removal %+v", got)
	}
	if err := TaintCluster(ctx, kc, "member9", fault, false); err == nil {
		t.Error("a cluster that does not exist: no error")
	}
}

// fakeFaults records partitions; partitioning fails from the failAt-th call on.
type fakeFaults struct {
	Faults
	calls  []bool // heal of each Partition call
	failAt int
}

func (f *fakeFaults) Partition(_ context.Context, _ string, heal bool) error {
	f.calls = append(f.calls, heal)
	if f.failAt > 0 && len(f.calls) >= f.failAt && !heal {
		return errors.New("link down")
	}
	return nil
}

func TestFlapLeavesTheMemberReconnected(t *testing.T) {
	f := &fakeFaults{}
	if err := Flap(context.Background(), f, "member1", 20*time.Millisecond, 110*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if len(f.calls) < 4 || f.calls[0] || !f.calls[len(f.calls)-1] {
		t.Fatalf("calls %v: want partition first and heal last", f.calls)
	}
	for i := 1; i < len(f.calls)-1; i++ {
		if f.calls[i] == f.calls[i-1] {
			t.Fatalf("calls %v: want partition and heal in turn", f.calls)
		}
	}
	f = &fakeFaults{failAt: 3}
	if err := Flap(context.Background(), f, "member1", 10*time.Millisecond, time.Second); err == nil || !f.calls[len(f.calls)-1] {
		t.Fatalf("a failing partition: err %v, calls %v; want the error and a heal last", err, f.calls)
	}
	if err := Flap(context.Background(), f, "member1", 0, time.Second); err == nil {
		t.Error("period 0 accepted")
	}
}

func TestUnsupported(t *testing.T) {
	err := Unsupported(config.ProviderKind, FaultFailPods, "kind runs real containers")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "fail-pods on the kind lab") {
		t.Errorf("%v", err)
	}
}

func TestCheckFreeSpace(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFreeSpace(filepath.Join(dir, "not", "yet", "made"), 1); err != nil {
		t.Fatalf("a directory not made yet is checked on its nearest parent: %v", err)
	}
	err := CheckFreeSpace(dir, 1<<62)
	if err == nil || !strings.Contains(err.Error(), "GiB free on the file system of "+dir) {
		t.Fatalf("want a refusal naming the free space and the directory, got %v", err)
	}
}

// fakeProvider is a Provider whose plan and tear-down are scripted: what the driver
// does around them is what a user of either lab sees.
type fakeProvider struct {
	Provider
	cfg       *config.Config
	planErr   error
	failAt    int // step index that fails (-1: none)
	ran       []string
	tornDown  int
	teardownE error
}

func (f *fakeProvider) Config() *config.Config { return f.cfg }
func (f *fakeProvider) State() (*State, error) { return ReadState(f.cfg) }
func (f *fakeProvider) TearDown(context.Context, io.Writer) error {
	f.tornDown++
	return f.teardownE
}
func (f *fakeProvider) Plan(context.Context, io.Writer) (*Plan, error) {
	if f.planErr != nil {
		return nil, f.planErr
	}
	var list []steps.Step
	for i, name := range []string{"one", "two", "three"} {
		list = append(list, steps.Step{Name: name, Run: func(context.Context) error {
			f.ran = append(f.ran, name)
			if i == f.failAt {
				return errors.New(name + " failed")
			}
			return nil
		}})
	}
	return &Plan{State: NewState(f.cfg), Steps: list, Recorded: func(st *State) { st.Images = "recorded" }}, nil
}

// TestDriver: one bring-up and one take-down for every provider. A failed plan starts
// nothing; the record is written with every step's time and Ready only when all passed;
// a lab that did not come up is taken down unless retained; Down keeps the record,
// marked down; Clean removes the lab's folder.
func TestDriver(t *testing.T) {
	newFake := func(failAt int) *fakeProvider {
		return &fakeProvider{cfg: &config.Config{Dir: t.TempDir(), Provider: config.ProviderLocal, Members: 2}, failAt: failAt}
	}
	ctx := context.Background()

	f := newFake(-1)
	f.planErr = ErrAlreadyUp
	if err := Up(ctx, f, UpOptions{}); !errors.Is(err, ErrAlreadyUp) || len(f.ran) != 0 || f.tornDown != 0 {
		t.Fatalf("a lab that is up: %v, ran %v, torn down %d", err, f.ran, f.tornDown)
	}

	f = newFake(-1)
	if err := Up(ctx, f, UpOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := f.State()
	if err != nil || !st.Ready || len(st.Steps) != 3 || st.Images != "recorded" || st.StoppedAt != nil || f.tornDown != 0 {
		t.Fatalf("up: %+v %v, torn down %d", st, err, f.tornDown)
	}
	if err := Down(ctx, f, nil); err != nil {
		t.Fatal(err)
	}
	if st, err = f.State(); err != nil || st.Ready || st.StoppedAt == nil || len(st.Steps) != 3 || f.tornDown != 1 {
		t.Fatalf("down: the record %+v %v, torn down %d", st, err, f.tornDown)
	}

	f = newFake(1)
	var out strings.Builder
	err = Up(ctx, f, UpOptions{Out: &out})
	if err == nil || !strings.Contains(err.Error(), "two failed") || !slices.Equal(f.ran, []string{"one", "two"}) || f.tornDown != 1 {
		t.Fatalf("a failed step: %v, ran %v, torn down %d", err, f.ran, f.tornDown)
	}
	if st, err = f.State(); err != nil || st.Ready || len(st.Steps) != 1 || !strings.Contains(out.String(), "taking it down") {
		t.Fatalf("a failed step: the record %+v %v; output %q", st, err, out.String())
	}

	f = newFake(0)
	if err := Up(ctx, f, UpOptions{Retain: true}); err == nil || f.tornDown != 0 {
		t.Fatalf("retained: %v, torn down %d", err, f.tornDown)
	}
	if st, err = f.State(); err != nil || st.Ready || st.StoppedAt != nil {
		t.Fatalf("retained: the record %+v %v", st, err)
	}

	f = newFake(2)
	f.teardownE = errors.New("a node container would not go")
	if err := Up(ctx, f, UpOptions{}); err == nil || !strings.Contains(err.Error(), "three failed") || !strings.Contains(err.Error(), "would not go") {
		t.Fatalf("a failed tear-down after a failed step: %v", err)
	}
	if st, err = f.State(); err != nil || st.Ready || st.StoppedAt != nil {
		t.Fatalf("a failed tear-down leaves no StoppedAt: %+v %v", st, err)
	}

	f = newFake(-1)
	if err := Up(ctx, f, UpOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Clean(ctx, f, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.cfg.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("clean left %s: %v", f.cfg.Dir, err)
	}
}
