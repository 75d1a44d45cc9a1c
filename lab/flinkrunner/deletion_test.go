package flinkrunner

import (
	"testing"
	"time"
)

const savepointsDir = "state.savepoints.dir"

func TestPlanDeletion(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		conf, defs  map[string]string
		want        DeletionSpec
		wantErr     bool
	}{
		{name: "default: cancel after the runner's time", want: DeletionSpec{Mode: DeletionCancel, After: 3 * time.Second}},
		{name: "savepoint from the spec, drained, into the savepoint dir",
			conf: map[string]string{SavepointOnDeletionKey: "true", DrainOnSavepointDeletionKey: "true", savepointsDir: "s3://b/sp"},
			want: DeletionSpec{Mode: DeletionSavepoint, Drain: true, After: 3 * time.Second, SavepointDir: "s3://b/sp"}},
		{name: "savepoint from the runner's defaults, the spec's directory",
			conf: map[string]string{savepointsDir: "s3://b/mine"},
			defs: map[string]string{SavepointOnDeletionKey: "TRUE", savepointsDir: "s3://b/default"},
			want: DeletionSpec{Mode: DeletionSavepoint, After: 3 * time.Second, SavepointDir: "s3://b/mine"}},
		{name: "the spec turns the runner's savepoint default off",
			conf: map[string]string{SavepointOnDeletionKey: "false"}, defs: map[string]string{SavepointOnDeletionKey: "true"},
			want: DeletionSpec{Mode: DeletionCancel, After: 3 * time.Second}},
		{name: "annotation overrides the time", annotations: map[string]string{DeletionTimeAnnotation: "20s"},
			want: DeletionSpec{Mode: DeletionCancel, After: 20 * time.Second}},
		{name: "bad annotation: error, the default kept", annotations: map[string]string{DeletionTimeAnnotation: "soon"},
			want: DeletionSpec{Mode: DeletionCancel, After: 3 * time.Second}, wantErr: true},
		{name: "negative annotation refused", annotations: map[string]string{DeletionTimeAnnotation: "-1s"},
			want: DeletionSpec{Mode: DeletionCancel, After: 3 * time.Second}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PlanDeletion(c.annotations, c.conf, c.defs, 3*time.Second)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
