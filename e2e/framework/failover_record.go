package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// FlinkFailoverRecordFile is the file in a run's artifacts folder that every
// Flink failover scenario appends one FlinkFailoverRecord to (JSON lines);
// `go run ./bench flink-rto FILE...` (make flink-rto) summarises them.
const FlinkFailoverRecordFile = "flink-failovers.jsonl"

// FlinkFailoverRecord is what one Flink failover measured. Phases are seconds
// between the scenario's timeline marks (polled every 2 s: about ±2 s each), -1
// when a mark is missing. Missing, Duplicated and Reprocessed come from the
// committed output (lab/flinkverify); RestoredID from Flink's REST API on the
// destination; LatestID from the checkpoint store's listing.
type FlinkFailoverRecord struct {
	Scenario string `json:"scenario"`
	Fault    string `json:"fault"`
	// Detection: failure injected → the cluster NotReady (crash) or the
	// FlinkDeployment unhealthy in Karmada (application failover).
	Detection float64 `json:"detectionSeconds"`
	// Scheduled: detection → the binding scheduled elsewhere (toleration,
	// eviction, scheduling).
	Scheduled float64 `json:"scheduledSeconds"`
	// Applied: scheduled → the FlinkDeployment exists on the destination.
	Applied float64 `json:"appliedSeconds"`
	// Running: applied → the job RUNNING there (restore webhook, JVM start, restore).
	Running float64 `json:"runningSeconds"`
	// FirstRecord: running → the job processed its first record.
	FirstRecord float64 `json:"firstRecordSeconds"`
	// RTO: failure injected → first record processed on the destination.
	RTO         float64 `json:"rtoSeconds"`
	RestoredID  int64   `json:"restoredCheckpoint"`
	LatestID    int64   `json:"latestCompletedCheckpoint"`
	Missing     int64   `json:"missing"`
	Duplicated  int64   `json:"duplicated"`
	Reprocessed int64   `json:"reprocessed"`
}

// AppendFlinkFailoverRecord appends r to dir/FlinkFailoverRecordFile.
func AppendFlinkFailoverRecord(dir string, r FlinkFailoverRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, FlinkFailoverRecordFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "%s\n", b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
