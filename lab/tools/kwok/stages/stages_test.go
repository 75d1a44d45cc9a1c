// Package stages tests the kwok stages the hermetic lab installs in its members
// (lab/manifests/kwok, rendered by `lab kwok-stages`) with kwok's own stage
// machinery at the pinned version: each test drives a pod through the stages
// the way kwok's controller does (match a stage by weight, render its status
// template, apply the merge patch) and asserts what a user would see with
// kubectl: phase, readiness, container states, restart counts, events.
package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/apis/internalversion"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/utils/gotpl"
	"sigs.k8s.io/kwok/pkg/utils/lifecycle"
)

// repoRoot is three folders up from this file: lab/tools/kwok/stages.
func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..")
}

var (
	buildOnce sync.Once
	buildDir  string
	labBin    string
	buildErr  error
)

// TestMain removes the lab command built for the tests (about 100 MB) once they ran.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// lab builds the lab command of this checkout once.
func lab(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lab-kwok-stages")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		labBin = filepath.Join(dir, "lab")
		cmd := exec.Command("go", "build", "-o", labBin, "./lab/cmd/lab")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./lab/cmd/lab: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return labBin
}

// labStages runs `lab kwok-stages` of this checkout with env added, with
// kwok's default pod stages of the pinned module as the defaults.
func labStages(t *testing.T, env ...string) *lifecycle.Lifecycle {
	t.Helper()
	root := repoRoot(t)
	defaults := t.TempDir()
	for name, s := range map[string]string{"pod-ready.yaml": fast.DefaultPodReady, "pod-complete.yaml": fast.DefaultPodComplete, "pod-delete.yaml": fast.DefaultPodDelete} {
		if err := os.WriteFile(filepath.Join(defaults, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(lab(t), "kwok-stages")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), append([]string{"LAB_KWOK_STAGES=" + defaults, "LAB_DIR=" + t.TempDir()}, env...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lab kwok-stages: %v\n%s", err, stderr.String())
	}
	file := filepath.Join(t.TempDir(), "stages.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	objs, err := config.Load(context.Background(), file)
	if err != nil {
		t.Fatalf("kwok cannot load the lab's stages: %v", err)
	}
	var pods []*internalversion.Stage
	for _, s := range config.FilterWithType[*internalversion.Stage](objs) {
		if s.Spec.ResourceRef.Kind == "Pod" {
			pods = append(pods, s)
		}
	}
	lc, err := lifecycle.NewLifecycle(pods)
	if err != nil {
		t.Fatalf("kwok rejects the lab's stages: %v", err)
	}
	return &lc
}

// kubelet plays kwok's controller for one pod.
type kubelet struct {
	t        *testing.T
	lc       *lifecycle.Lifecycle
	pod      *unstructured.Unstructured
	events   []string
	renderer gotpl.Renderer
}

func newKubelet(t *testing.T, lc *lifecycle.Lifecycle, podYAML string) *kubelet {
	t.Helper()
	pod := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(podYAML), &pod.Object); err != nil {
		t.Fatal(err)
	}
	fake := func(v string) func(...any) any { return func(...any) any { return v } }
	fakes := func(v string) func(...any) any { return func(...any) any { return []any{v} } }
	return &kubelet{t: t, lc: lc, pod: pod, renderer: gotpl.NewRenderer(gotpl.FuncMap{
		"NodeIP": fake("10.0.0.1"), "NodeIPWith": fake("10.0.0.1"), "NodeName": fake("node-000000"), "NodePort": fake("10250"),
		"PodIP": fake("10.0.1.1"), "PodIPWith": fake("10.0.1.1"),
		"NodeIPsWith": fakes("10.0.0.1"), "PodIPsWith": fakes("10.0.1.1"),
	})}
}

func (k *kubelet) event() *lifecycle.Event {
	return &lifecycle.Event{Labels: k.pod.GetLabels(), Annotations: k.pod.GetAnnotations(), Data: k.pod}
}

// step lets kwok pick the next stage (none: ""), applies it and returns its
// name and delay. kwok picks at random among matching stages by weight, so it
// picks many times and fails if the choice is not always the same.
func (k *kubelet) step() (string, time.Duration) {
	k.t.Helper()
	ctx := context.Background()
	var stage *lifecycle.Stage
	for i := 0; i < 50; i++ {
		s, err := k.lc.Match(ctx, k.event())
		if err != nil {
			k.t.Fatalf("match: %v", err)
		}
		if i > 0 && (s == nil) != (stage == nil) || (s != nil && stage != nil && s.Name() != stage.Name()) {
			k.t.Fatalf("kwok picks different stages for the same pod: %v and %v", name(stage), name(s))
		}
		stage = s
	}
	if stage == nil {
		return "", 0
	}
	delay, _, err := stage.Delay(ctx, k.event(), time.Now())
	if err != nil {
		k.t.Fatalf("%s: delay: %v", stage.Name(), err)
	}
	_, err = stage.DoSteps(0, k.pod.GetFinalizers(), k.pod, k.renderer,
		func(e *internalversion.StageEvent) error {
			k.events = append(k.events, e.Type+" "+e.Reason)
			return nil
		},
		func() error { k.t.Fatalf("%s deletes the pod", stage.Name()); return nil },
		func(p *lifecycle.Patch) error {
			orig, err := json.Marshal(k.pod.Object)
			if err != nil {
				return err
			}
			patched, err := jsonpatch.MergePatch(orig, p.Data)
			if err != nil {
				return fmt.Errorf("merge patch %s: %w", p.Data, err)
			}
			k.pod.Object = map[string]any{}
			return json.Unmarshal(patched, &k.pod.Object)
		},
		func(*lifecycle.Apply) error { return nil })
	if err != nil {
		k.t.Fatalf("%s: %v", stage.Name(), err)
	}
	return stage.Name(), delay
}

func name(s *lifecycle.Stage) string {
	if s == nil {
		return "(none)"
	}
	return s.Name()
}

// expect runs one step and checks the stage kwok picked.
func (k *kubelet) expect(stage string) time.Duration {
	k.t.Helper()
	got, delay := k.step()
	if got != stage {
		k.t.Fatalf("stage: got %q, want %q; pod status:\n%s", got, stage, k.statusJSON())
	}
	return delay
}

func (k *kubelet) status() corev1.PodStatus {
	k.t.Helper()
	var st corev1.PodStatus
	b, _ := json.Marshal(k.pod.Object["status"])
	if err := json.Unmarshal(b, &st); err != nil {
		k.t.Fatalf("the stages wrote a status that is not a PodStatus: %v\n%s", err, b)
	}
	return st
}

func (k *kubelet) statusJSON() string {
	b, _ := json.MarshalIndent(k.pod.Object["status"], "", "  ")
	return string(b)
}

func (k *kubelet) ready() bool {
	for _, c := range k.status().Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *kubelet) annotate(key, value string) {
	a := k.pod.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if value == "" {
		delete(a, key)
	} else {
		a[key] = value
	}
	k.pod.SetAnnotations(a)
}

// pod is a scheduled pod, as kube-scheduler leaves it for kwok.
func pod(images []string, annotations map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-0\n  namespace: default\n")
	if len(annotations) > 0 {
		b.WriteString("  annotations:\n")
		for k, v := range annotations {
			fmt.Fprintf(&b, "    %q: %q\n", k, v)
		}
	}
	b.WriteString("spec:\n  nodeName: node-000000\n  containers:\n")
	for i, img := range images {
		fmt.Fprintf(&b, "  - name: c%d\n    image: %q\n", i, img)
	}
	b.WriteString("status:\n  phase: Pending\n  conditions:\n  - type: PodScheduled\n    status: \"True\"\n")
	return b.String()
}

func TestPullableImageBecomesReady(t *testing.T) {
	k := newKubelet(t, labStages(t), pod([]string{"nginx:1.19.0"}, nil))
	k.expect("pod-ready")
	if st := k.status(); st.Phase != corev1.PodRunning || !k.ready() {
		t.Fatalf("want Running and Ready, got %s ready=%v", st.Phase, k.ready())
	}
	k.expect("")
}

func TestUnpullableImageBacksOff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		images []string
		stuck  string // the image that cannot be pulled
	}{
		{name: "fake/ prefix, as Karmada's e2e ImageOverrider writes it", images: []string{"fake/nginx:1.19.0"}, stuck: "fake/nginx:1.19.0"},
		{name: "default deny-list", images: []string{"registry.invalid/app:1"}, stuck: "registry.invalid/app:1"},
		{name: "one of two containers", images: []string{"nginx:1.19.0", "fake/sidecar:1"}, stuck: "fake/sidecar:1"},
		{name: "allow-list only", env: []string{"LAB_UNPULLABLE_IMAGES=none", "LAB_PULLABLE_IMAGES=registry.example.com/"}, images: []string{"nginx:1.19.0"}, stuck: "nginx:1.19.0"},
		{name: "custom deny-list", env: []string{"LAB_UNPULLABLE_IMAGES=ghcr.io/gone/"}, images: []string{"ghcr.io/gone/app:2"}, stuck: "ghcr.io/gone/app:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKubelet(t, labStages(t, tc.env...), pod(tc.images, nil))
			if d := k.expect("lab-pod-image-pull-failed"); d != 500*time.Millisecond {
				t.Errorf("first pull fails after %v, want 500ms", d)
			}
			checkWaiting(t, k, tc.stuck, "ErrImagePull")
			k.expect("lab-pod-image-pull-backoff")
			checkWaiting(t, k, tc.stuck, "ImagePullBackOff")
			// The kubelet tries again after its back-off, and fails again.
			if d := k.expect("lab-pod-image-pull-failed"); d != 10*time.Second {
				t.Errorf("retry after %v, want 10s", d)
			}
			checkWaiting(t, k, tc.stuck, "ErrImagePull")
			k.expect("lab-pod-image-pull-backoff")
			checkWaiting(t, k, tc.stuck, "ImagePullBackOff")
			if want := []string{"Warning Failed", "Normal BackOff", "Warning Failed", "Normal BackOff"}; strings.Join(k.events, ",") != strings.Join(want, ",") {
				t.Errorf("events: got %v, want %v", k.events, want)
			}
		})
	}
}

// checkWaiting: the pod is Pending and not Ready, the container with image
// stuck waits with reason, the others run.
func checkWaiting(t *testing.T, k *kubelet, stuck, reason string) {
	t.Helper()
	st := k.status()
	if st.Phase != corev1.PodPending || k.ready() {
		t.Fatalf("want Pending and not Ready, got %s ready=%v", st.Phase, k.ready())
	}
	for _, cs := range st.ContainerStatuses {
		pullable := cs.Image != stuck
		switch {
		case pullable && cs.State.Running == nil:
			t.Errorf("%s (%s): want running, got %+v", cs.Name, cs.Image, cs.State)
		case !pullable && (cs.State.Waiting == nil || cs.State.Waiting.Reason != reason):
			t.Errorf("%s (%s): want waiting %s, got %+v", cs.Name, cs.Image, reason, cs.State)
		case cs.Ready:
			t.Errorf("%s: ready", cs.Name)
		}
	}
}

func TestAllowListAdmitsItsRegistry(t *testing.T) {
	k := newKubelet(t, labStages(t, "LAB_PULLABLE_IMAGES=registry.example.com/"), pod([]string{"registry.example.com/nginx:1"}, nil))
	k.expect("pod-ready")
	if !k.ready() {
		t.Fatal("an image of the allow-listed registry must become Ready")
	}
}

func TestBadImagePrefixIsRefused(t *testing.T) {
	cmd := exec.Command(lab(t), "kwok-stages")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), `LAB_UNPULLABLE_IMAGES=fake/,"); halt #`, "LAB_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "LAB_UNPULLABLE_IMAGES") || !strings.Contains(string(out), "is not an image prefix") {
		t.Fatalf("want a clear error naming LAB_UNPULLABLE_IMAGES, got err=%v\n%s", err, out)
	}
}

func TestCrashingContainerLoopsWithGrowingBackOff(t *testing.T) {
	k := newKubelet(t, labStages(t), pod([]string{"nginx:1.19.0"}, map[string]string{"chaos.lab/crash-exit-code": "3"}))
	var backoffs []time.Duration
	for restart := int32(1); restart <= 4; restart++ {
		k.expect("lab-pod-container-crash")
		st := k.status()
		cs := st.ContainerStatuses[0]
		if st.Phase != corev1.PodRunning || k.ready() {
			t.Fatalf("crash %d: want Running and not Ready, got %s ready=%v", restart, st.Phase, k.ready())
		}
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" {
			t.Fatalf("crash %d: want waiting CrashLoopBackOff, got %+v", restart, cs.State)
		}
		if cs.RestartCount != restart {
			t.Fatalf("crash %d: restartCount %d", restart, cs.RestartCount)
		}
		if cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 3 {
			t.Fatalf("crash %d: want lastState.terminated.exitCode 3, got %+v", restart, cs.LastTerminationState)
		}
		backoffs = append(backoffs, k.expect("lab-pod-container-restart"))
		if cs := k.status().ContainerStatuses[0]; cs.State.Running == nil || cs.RestartCount != restart || cs.Ready {
			t.Fatalf("restart %d: want running, not ready, restartCount %d; got %+v", restart, restart, cs)
		}
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}
	if fmt.Sprint(backoffs) != fmt.Sprint(want) {
		t.Errorf("back-off: got %v, want %v", backoffs, want)
	}
	k.annotate("chaos.lab/crash-exit-code", "")
	k.expect("lab-pod-ready-again")
	if !k.ready() {
		t.Fatal("the pod must be Ready once the crash annotation is removed")
	}
}

func TestFailingReadinessProbe(t *testing.T) {
	k := newKubelet(t, labStages(t), pod([]string{"nginx:1.19.0"}, map[string]string{"chaos.lab/readiness-probe": "failing"}))
	k.expect("lab-pod-readiness-probe-failing")
	if st := k.status(); st.Phase != corev1.PodRunning || k.ready() || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("want Running, container running, pod not Ready; got %s ready=%v", st.Phase, k.ready())
	}
	k.expect("")
	k.annotate("chaos.lab/readiness-probe", "")
	k.expect("lab-pod-ready-again")
	if !k.ready() {
		t.Fatal("the pod must be Ready once the probe passes")
	}
	k.annotate("chaos.lab/readiness-probe", "failing")
	k.expect("lab-pod-readiness-probe-failing")
	if k.ready() {
		t.Fatal("a Ready pod whose probe starts failing must lose readiness")
	}
}

func TestChaosLabelStillWorks(t *testing.T) {
	k := newKubelet(t, labStages(t), pod([]string{"nginx:1.19.0"}, nil))
	k.expect("pod-ready")
	k.pod.SetLabels(map[string]string{"chaos.lab/not-ready": "true"})
	k.expect("lab-pod-not-ready")
	if k.ready() {
		t.Fatal("the chaos label must make the pod not Ready")
	}
	k.pod.SetLabels(nil)
	k.expect("lab-pod-ready-again")
	if !k.ready() {
		t.Fatal("removing the chaos label must make the pod Ready")
	}
}
