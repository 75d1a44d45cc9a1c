package config

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FeatureGates is the lab's Karmada feature gates as name → enabled, for both
// providers. FailoverHistory exists only in the patched build; the upstream
// build gets the others, so both run the same failover path. overrides change
// or add gates (e.g. FailoverHistory=false for a scenario).
func FeatureGates(flavour Flavour, overrides map[string]bool) map[string]bool {
	gates := map[string]bool{"Failover": true, "GracefulEviction": true, "StatefulFailoverInjection": true}
	if flavour == FlavourPatched {
		gates["FailoverHistory"] = true
	}
	for k, v := range overrides {
		gates[k] = v
	}
	return gates
}

// FeatureGatesFlag renders gates as the value of --feature-gates, sorted by name.
func FeatureGatesFlag(gates map[string]bool) string {
	parts := make([]string, 0, len(gates))
	for _, n := range slices.Sorted(maps.Keys(gates)) {
		parts = append(parts, n+"="+strconv.FormatBool(gates[n]))
	}
	return strings.Join(parts, ",")
}

// ControllerManagerFailoverFlags is karmada-controller-manager's failover
// settings in the lab, as flag name → value (without the leading dashes):
// NoExecute taint eviction on, fast cluster status and failure detection, and
// the history cap (patched build only; upstream has no such flag).
func (c *Config) ControllerManagerFailoverFlags() map[string]string {
	flags := map[string]string{
		"enable-no-execute-taint-eviction": "true",
		"cluster-status-update-frequency":  "5s",
		"cluster-failure-threshold":        c.ClusterFailureThreshold,
		"cluster-monitor-grace-period":     c.ClusterMonitorGrace,
	}
	if c.Karmada == FlavourPatched {
		flags["failover-history-limit"] = strconv.Itoa(c.FailoverHistoryLimit)
	}
	return flags
}

// Args renders flags as sorted --name=value arguments.
func Args(flags map[string]string) []string {
	args := make([]string, 0, len(flags))
	for _, n := range slices.Sorted(maps.Keys(flags)) {
		args = append(args, "--"+n+"="+flags[n])
	}
	return args
}

// OutOfServiceTaint is the cluster taint of the patched Karmada
// (clusterv1alpha1.TaintClusterOutOfService, cluster.karmada.io/out-of-service)
// with which an operator or a fencing automation asserts that a member's
// workloads are stopped and stay stopped, in `karmadactl taint` form. With
// NoExecute it also fails the member's workloads over at once.
const OutOfServiceTaint = "cluster.karmada.io/out-of-service=shutdown:NoExecute"
