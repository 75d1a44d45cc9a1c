package flinkrunner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const overviewRunning = `{"jobs":[{"jid":"aaaa","name":"failover-lab","start-time":1764700000000,"end-time":-1,
"duration":5000,"state":"RUNNING","last-modification":1764700003000,"tasks":{"total":2,"running":2}}]}`

const overviewCreated = `{"jobs":[{"jid":"aaaa","name":"failover-lab","start-time":1764700000000,"end-time":-1,
"duration":5000,"state":"CREATED","last-modification":1764700000500,"tasks":{"total":2,"created":2}}]}`

const overviewTwo = `{"jobs":[
{"jid":"old","name":"old","start-time":1,"state":"CANCELED","last-modification":2},
{"jid":"aaaa","name":"failover-lab","start-time":1764700000000,"state":"RUNNING","last-modification":1764700003000}]}`

const overviewNoLastModification = `{"jobs":[{"jid":"aaaa","name":"failover-lab","start-time":1764700000000,"state":"CREATED","last-modification":0}]}`

// fakeFlink serves /jobs/overview with a switchable answer.
type fakeFlink struct {
	mu   sync.Mutex
	code int
	body string
}

func (f *fakeFlink) set(code int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.code, f.body = code, body
}

func (f *fakeFlink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/jobs/overview" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.WriteHeader(f.code)
	_, _ = w.Write([]byte(f.body))
}

// step is one poll: "exit", "down" (connection refused), or an HTTP answer.
type step struct {
	kind string // "http", "down", "exit"
	code int
	body string
}

func ok(body string) step { return step{kind: "http", code: 200, body: body} }

var (
	down = step{kind: "down"}
	exit = step{kind: "exit"}
)

func launchedStatus() Status {
	return Status{
		JobManagerDeploymentStatus: JMDeploying, LifecycleState: LifecycleDeployed, JobID: "aaaa",
		JobState: JobReconciling, ObservedGeneration: 2, ReconciliationState: "DEPLOYED",
		ReconciliationTimestamp: 5, LastReconciledSpec: "{spec}", TaskManagerReplicas: 1, PID: 42,
	}
}

func TestRESTToStatus(t *testing.T) {
	fake := &fakeFlink{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	// A closed server gives "connection refused", like a JVM whose REST endpoint is not up.
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	type fields struct {
		JM, Lifecycle, JobState, JobID, JobName, Start, Update, LastStable string
		ErrorContains                                                      string
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  fields
	}{
		{"REST not up yet", []step{down},
			fields{JM: JMDeploying, Lifecycle: LifecycleDeployed, JobState: JobReconciling, JobID: "aaaa"}},
		{"REST up, no job yet", []step{ok(`{"jobs":[]}`)},
			fields{JM: JMReady, Lifecycle: LifecycleDeployed, JobState: JobReconciling, JobID: "aaaa"}},
		{"running", []step{down, ok(overviewRunning)},
			fields{JM: JMReady, Lifecycle: LifecycleStable, JobState: "RUNNING", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", LastStable: "{spec}"}},
		{"created (0 slots) stays DEPLOYED", []step{ok(overviewCreated), ok(overviewCreated)},
			fields{JM: JMReady, Lifecycle: LifecycleDeployed, JobState: "CREATED", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700000500"}},
		{"no last-modification: updateTime = startTime", []step{ok(overviewNoLastModification)},
			fields{JM: JMReady, Lifecycle: LifecycleDeployed, JobState: "CREATED", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700000000"}},
		{"picks our job among several", []step{ok(overviewTwo)},
			fields{JM: JMReady, Lifecycle: LifecycleStable, JobState: "RUNNING", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", LastStable: "{spec}"}},
		{"restarting after running stays STABLE", []step{ok(overviewRunning), ok(strings.Replace(overviewRunning, `"RUNNING"`, `"RESTARTING"`, 1))},
			fields{JM: JMReady, Lifecycle: LifecycleStable, JobState: "RESTARTING", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", LastStable: "{spec}"}},
		{"job FAILED", []step{ok(strings.Replace(overviewRunning, `"RUNNING"`, `"FAILED"`, 1))},
			fields{JM: JMReady, Lifecycle: LifecycleFailed, JobState: "FAILED", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000"}},
		{"REST lost after running", []step{ok(overviewRunning), down},
			fields{JM: JMDeployedNotReady, Lifecycle: LifecycleStable, JobState: JobReconciling, JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", LastStable: "{spec}"}},
		{"REST 500 before ready", []step{{kind: "http", code: 500, body: "boom"}},
			fields{JM: JMDeploying, Lifecycle: LifecycleDeployed, JobState: JobReconciling, JobID: "aaaa"}},
		{"garbage JSON", []step{ok("not json")},
			fields{JM: JMDeploying, Lifecycle: LifecycleDeployed, JobState: JobReconciling, JobID: "aaaa"}},
		{"process exits while running", []step{ok(overviewRunning), exit},
			fields{JM: JMError, Lifecycle: LifecycleFailed, JobState: JobReconciling, JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", LastStable: "{spec}", ErrorContains: "exited"}},
		{"process exits before REST", []step{down, exit},
			fields{JM: JMError, Lifecycle: LifecycleFailed, JobState: JobReconciling, JobID: "aaaa", ErrorContains: "exited"}},
		{"process exits after FINISHED keeps FINISHED", []step{ok(strings.Replace(overviewRunning, `"RUNNING"`, `"FINISHED"`, 1)), exit},
			fields{JM: JMError, Lifecycle: LifecycleFailed, JobState: "FINISHED", JobID: "aaaa", JobName: "failover-lab",
				Start: "1764700000000", Update: "1764700003000", ErrorContains: "exited"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := NewTracker(launchedStatus())
			var st Status
			for _, s := range tc.steps {
				var o Observation
				switch s.kind {
				case "exit":
					o = Observation{Exited: true, ExitMsg: "Flink process 42 exited (exit status 1); last lines: ..."}
				case "down":
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					o.Jobs, o.RestErr = FetchOverview(ctx, http.DefaultClient, closedURL)
					cancel()
				default:
					fake.set(s.code, s.body)
					o.Jobs, o.RestErr = FetchOverview(context.Background(), srv.Client(), srv.URL)
				}
				st = tr.Observe(o)
			}
			got := fields{JM: st.JobManagerDeploymentStatus, Lifecycle: st.LifecycleState, JobState: st.JobState,
				JobID: st.JobID, JobName: st.JobName, Start: st.StartTime, Update: st.UpdateTime, LastStable: st.LastStableSpec}
			want := tc.want
			if want.ErrorContains != "" {
				if !strings.Contains(st.Error, want.ErrorContains) {
					t.Errorf("error %q does not contain %q", st.Error, want.ErrorContains)
				}
				want.ErrorContains = ""
			} else if st.Error != "" {
				t.Errorf("unexpected error %q", st.Error)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			// Identity fields never change.
			if st.ObservedGeneration != 2 || st.ReconciliationState != "DEPLOYED" || st.ReconciliationTimestamp != 5 {
				t.Errorf("identity fields changed: %+v", st)
			}
		})
	}
}

func TestTrackerUnchangedPollsGiveEqualStatus(t *testing.T) {
	tr := NewTracker(launchedStatus())
	jobs := []JobOverview{{JID: "aaaa", Name: "n", State: "RUNNING", StartTime: 1, LastModification: 2}}
	a := tr.Observe(Observation{Jobs: jobs})
	b := tr.Observe(Observation{Jobs: jobs})
	if a != b {
		t.Fatal("two identical polls must give equal statuses (no status write)")
	}
	c := tr.SetGeneration(3, "{spec3}")
	if c.ObservedGeneration != 3 || c.LastReconciledSpec != "{spec3}" || c.LastStableSpec != "{spec3}" {
		t.Fatalf("SetGeneration: %+v", c)
	}
	if _, err := FetchOverview(context.Background(), http.DefaultClient, "http://127.0.0.1:1"); err == nil ||
		errors.Is(err, context.Canceled) {
		t.Fatalf("want a connection error, got %v", err)
	}
}

func TestStatusToMap(t *testing.T) {
	st := Status{
		JobManagerDeploymentStatus: JMReady, LifecycleState: LifecycleStable, JobID: "aaaa", JobName: "failover-lab",
		JobState: "RUNNING", StartTime: "1", UpdateTime: "2", UpgradeSavepointPath: "file:///c/chk-1",
		ObservedGeneration: 4, ReconciliationState: "DEPLOYED", ReconciliationTimestamp: 9, LastReconciledSpec: "{}",
		TaskManagerReplicas: 0, RestURL: "http://127.0.0.1:24700", PID: 7,
	}
	want := map[string]interface{}{
		"jobManagerDeploymentStatus": "READY",
		"lifecycleState":             "STABLE",
		"observedGeneration":         int64(4),
		"jobStatus": map[string]interface{}{"jobId": "aaaa", "jobName": "failover-lab", "state": "RUNNING",
			"startTime": "1", "updateTime": "2", "upgradeSavepointPath": "file:///c/chk-1"},
		"reconciliationStatus": map[string]interface{}{"state": "DEPLOYED", "reconciliationTimestamp": int64(9), "lastReconciledSpec": "{}"},
		"taskManager":          map[string]interface{}{"replicas": int64(0)},
		"clusterInfo":          map[string]interface{}{ClusterInfoRestURL: "http://127.0.0.1:24700", ClusterInfoPID: "7"},
	}
	if diff := cmp.Diff(want, st.ToMap()); diff != "" {
		t.Errorf("ToMap (-want +got):\n%s", diff)
	}
	st.TaskManagerReplicas = -1
	if _, ok := st.ToMap()["taskManager"]; ok {
		t.Error("taskManager must be omitted when replicas < 0")
	}
}

func TestTrackerValidationErrorKeepsTheJobAndClears(t *testing.T) {
	tr := NewTracker(Status{JobID: "j", JobState: JobReconciling, JobManagerDeploymentStatus: JMDeploying})
	tr.Observe(Observation{Jobs: []JobOverview{{JID: "j", Name: "n", State: JobRunning, StartTime: 1}}})
	st := tr.SetValidationError("invalid FlinkDeployment spec: x")
	if st.Error != "invalid FlinkDeployment spec: x" || st.JobState != JobRunning || st.JobID != "j" {
		t.Fatalf("refused spec: %+v, want the running job with the error", st)
	}
	if st = tr.Observe(Observation{Jobs: []JobOverview{{JID: "j", Name: "n", State: JobRunning, StartTime: 1}}}); st.Error == "" {
		t.Errorf("a poll cleared the validation error: %+v", st)
	}
	if !tr.ClearValidationError() || tr.Current().Error != "" {
		t.Errorf("valid spec again: error %q", tr.Current().Error)
	}
	if tr.ClearValidationError() {
		t.Error("nothing to clear the second time")
	}
	// An exit error seen while the spec was refused is not hidden by the clear.
	tr.SetValidationError("invalid")
	tr.Observe(Observation{Exited: true, ExitMsg: "exit status 1"})
	tr.ClearValidationError()
	if tr.Current().Error != "exit status 1" {
		t.Errorf("exit error lost: %q", tr.Current().Error)
	}
}
