package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

func testRun(f config.Flavour, round, failed int, drain, writes float64) Run {
	return Run{Flavour: f, Round: round, Bindings: 200, FailedOver: failed, DrainSeconds: drain, WritesPerRB: writes}
}

func TestSummarizeRoundRatios(t *testing.T) {
	res := &Result{N: 200, Runs: []Run{
		testRun(config.FlavourUpstream, 2, 50, 50, 45),
		testRun(config.FlavourPatched, 2, 40, 44, 45.5),
		testRun(config.FlavourUpstream, 1, 100, 100, 46),
		testRun(config.FlavourPatched, 1, 80, 80, 47),
		testRun(config.FlavourUpstream, 3, 60, 60, 44), // patched run of round 3 missing
	}}
	summarize(res)
	if len(res.RoundRatios) != 2 {
		t.Fatalf("want the two complete rounds, got %+v", res.RoundRatios)
	}
	if r := res.RoundRatios[0]; r.Round != 1 || r.DrainPerBinding != 1.0 || r.ExtraWrites != 1.0 {
		t.Errorf("round 1: %+v", r)
	}
	if r := res.RoundRatios[1]; r.Round != 2 || r.DrainPerBinding < 1.0999 || r.DrainPerBinding > 1.1001 || r.ExtraWrites != 0.5 {
		t.Errorf("round 2: %+v", r)
	}
	if got := res.Medians["upstream/apiWritesPerFailedOverBinding"].Median; got != 45 {
		t.Errorf("upstream median writes %v, want 45", got)
	}
}

func TestResumeResult(t *testing.T) {
	setup := Setup{Patched: "v1.18.2-failoverhistory.abc", Upstream: "v1.18.2", NodesPerMember: 12, Members: 3}
	out := filepath.Join(t.TempDir(), "result.json")
	res := &Result{N: 2000, Setup: setup, Rounds: 5, Runs: []Run{
		testRun(config.FlavourUpstream, 1, 700, 560, 45), testRun(config.FlavourPatched, 1, 690, 540, 45.3),
	}}
	summarize(res)
	if err := writeResult(res, out, 2000, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}

	got, err := resumeResult(out, 2000, 5, setup)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 2 || got.Runs[1].WritesPerRB != 45.3 {
		t.Errorf("runs not resumed: %+v", got.Runs)
	}

	other := setup
	other.Patched = "v1.18.2-failoverhistory.def"
	for name, tc := range map[string]struct {
		n, rounds int
		setup     Setup
		want      string
	}{
		"another series":        {2000, 5, other, "cannot resume"},
		"another size":          {200, 5, setup, "cannot resume"},
		"fewer rounds than run": {2000, 0, setup, "more than the 0 rounds"},
	} {
		if _, err := resumeResult(out, tc.n, tc.rounds, tc.setup); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, tc.want)
		}
	}
	if _, err := resumeResult(filepath.Join(t.TempDir(), "none.json"), 2000, 5, setup); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("missing file: %v", err)
	}
	var raw map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &raw); err != nil || raw["setup"] == nil || raw["roundRatios"] == nil {
		t.Errorf("result file lacks setup or roundRatios: %v %s", err, b)
	}
}
