package lab

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/steps"
)

// State is the running lab's record, lab.json in the lab's folder, the same for every
// provider: what was brought up, with which settings, and where its files are. e2e, bench
// and `lab status` read it instead of the environment, which may have changed since.
type State struct {
	Provider  config.Provider `json:"provider"`
	Karmada   config.Flavour  `json:"karmada"`
	Members   []string        `json:"members"`
	StartedAt time.Time       `json:"startedAt"`
	Ready     bool            `json:"ready"`
	// StoppedAt is when Down took the lab down (nil: it was not).
	StoppedAt *time.Time     `json:"stoppedAt,omitempty"`
	Steps     []steps.Timing `json:"steps,omitempty"`
	// Restore is how members restore a failed-over FlinkDeployment (kind: webhook or kyverno).
	Restore string `json:"restore,omitempty"`
	// FailoverHistoryLimit is karmada-controller-manager's --failover-history-limit.
	FailoverHistoryLimit int `json:"failoverHistoryLimit,omitempty"`
	// NodesPerMember is the number of (fake) nodes of each member.
	NodesPerMember int `json:"nodesPerMember,omitempty"`
	// FlinkRunner tells that the members run the lab's FlinkDeployment runner (the operator
	// stand-in of the hermetic lab), whose Flink REST address the Flink scenarios read.
	FlinkRunner bool `json:"flinkRunner,omitempty"`
	// FlinkOutputDir holds the committed output of the lab's Flink jobs ("": none on this host).
	FlinkOutputDir string `json:"flinkOutputDir,omitempty"`
	// Images is where the kind lab's images came from: build or pull (LAB_IMAGES resolved).
	Images string `json:"images,omitempty"`
	// DockerHost is the Docker engine the kind lab runs on ("": docker's
	// default); OwnDocker tells that it is the lab's own dockerd (lab/kind/engine).
	DockerHost string `json:"dockerHost,omitempty"`
	OwnDocker  bool   `json:"ownDocker,omitempty"`
	// Components are the parts of the lab, in start order (Component).
	Components []Component `json:"components,omitempty"`
	// Logs are the folders with the logs of the lab's processes, copied into e2e artifacts.
	Logs []string `json:"logs,omitempty"`
}

// ReadState reads the record of the lab in cfg.Dir; the error wraps os.ErrNotExist when no
// lab was brought up there.
func ReadState(cfg *config.Config) (*State, error) {
	b, err := os.ReadFile(cfg.StateFile())
	if err != nil {
		return nil, err
	}
	s := &State{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.StateFile(), err)
	}
	return s, nil
}

// WriteState writes the record of the lab in cfg.Dir.
func WriteState(cfg *config.Config, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(cfg.StateFile(), append(b, '\n'), 0o644)
}

// NewState is the record of a lab of cfg about to be brought up.
func NewState(cfg *config.Config) *State {
	return &State{Provider: cfg.Provider, Karmada: cfg.Karmada, StartedAt: time.Now().UTC(), Members: cfg.MemberNames(),
		FailoverHistoryLimit: cfg.FailoverHistoryLimit, NodesPerMember: cfg.NodesPerMember}
}

// ComponentStatus is one row of `make lab-status`.
type ComponentStatus struct {
	Component string
	PID       int
	Address   string
	Healthy   bool
	Detail    string
}

// PrintStatus writes the status table.
func PrintStatus(out io.Writer, rows []ComponentStatus) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "COMPONENT\tPID\tADDRESS\tHEALTHY\tDETAIL")
	for _, r := range rows {
		pid := "-"
		if r.PID > 0 {
			pid = strconv.Itoa(r.PID)
		}
		detail := r.Detail
		if len(detail) > 60 {
			detail = detail[:57] + "..."
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%s\n", r.Component, pid, r.Address, r.Healthy, detail)
	}
	w.Flush()
}
