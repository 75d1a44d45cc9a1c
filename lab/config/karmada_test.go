package config

import (
	"slices"
	"testing"
)

func TestFeatureGatesPerBuild(t *testing.T) {
	if got := FeatureGatesFlag(FeatureGates(FlavourPatched, nil)); got != "Failover=true,FailoverHistory=true,GracefulEviction=true,StatefulFailoverInjection=true" {
		t.Errorf("patched: %s", got)
	}
	// Upstream has no FailoverHistory gate: passing it would stop the binary.
	if got := FeatureGatesFlag(FeatureGates(FlavourUpstream, nil)); got != "Failover=true,GracefulEviction=true,StatefulFailoverInjection=true" {
		t.Errorf("upstream: %s", got)
	}
	if got := FeatureGates(FlavourPatched, map[string]bool{"FailoverHistory": false, "PropagateDeps": true}); got["FailoverHistory"] || !got["PropagateDeps"] {
		t.Errorf("overrides not applied: %v", got)
	}
}

func TestControllerManagerFailoverFlags(t *testing.T) {
	c := &Config{Karmada: FlavourPatched, ClusterFailureThreshold: "10s", ClusterMonitorGrace: "20s", FailoverHistoryLimit: 5}
	args := Args(c.ControllerManagerFailoverFlags())
	want := []string{"--cluster-failure-threshold=10s", "--cluster-monitor-grace-period=20s", "--cluster-status-update-frequency=5s",
		"--enable-no-execute-taint-eviction=true", "--failover-history-limit=5"}
	if !slices.Equal(args, want) {
		t.Errorf("patched: %v, want %v", args, want)
	}
	c.Karmada = FlavourUpstream
	if slices.Contains(Args(c.ControllerManagerFailoverFlags()), "--failover-history-limit=5") {
		t.Error("upstream's controller-manager got --failover-history-limit, a flag it does not have")
	}
}
