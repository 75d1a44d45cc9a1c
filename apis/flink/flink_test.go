package flink

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestConfigurationFlatOrNested(t *testing.T) {
	var spec map[string]any
	if err := json.Unmarshal([]byte(`{
		"state.checkpoints.dir": "s3://b/ns/job",
		"execution": {"checkpointing": {"interval": "2s", "num-retained": 3}, "savepoint.ignore-unclaimed-state": true},
		"pipeline.jars": ["a.jar", "b.jar"],
		"parallelism.default": 2.5,
		"empty": null
	}`), &spec); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"state.checkpoints.dir":                      "s3://b/ns/job",
		"execution.checkpointing.interval":           "2s",
		"execution.checkpointing.num-retained":       "3",
		"execution.savepoint.ignore-unclaimed-state": "true",
		"pipeline.jars":                              "a.jar;b.jar",
		"parallelism.default":                        "2.5",
		"empty":                                      "",
	}
	if got := Configuration(spec); !reflect.DeepEqual(got, want) {
		t.Errorf("Configuration =\n%v\nwant\n%v", got, want)
	}
}

func TestFirst(t *testing.T) {
	spec := map[string]string{"state.checkpoints.dir": "s3://spec", "execution.checkpointing.dir": ""}
	defaults := map[string]string{"execution.checkpointing.dir": "s3://default"}
	if got := First(CheckpointDirKeys, spec, defaults); got != "s3://spec" {
		t.Errorf("spec first: %q", got)
	}
	if got := First(CheckpointDirKeys, map[string]string{}, defaults); got != "s3://default" {
		t.Errorf("defaults: %q", got)
	}
	if got := First(CheckpointDirKeys); got != "" {
		t.Errorf("nothing: %q", got)
	}
}
