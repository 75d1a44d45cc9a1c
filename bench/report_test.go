package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

func TestReportTables(t *testing.T) {
	run := func(f config.Flavour, round, failed int, drain, writes float64, reqs map[string]float64, bytes float64) Run {
		return Run{Flavour: f, Round: round, Bindings: 100, FailedOver: failed, DrainSeconds: drain, WritesPerRB: writes,
			RequestsPerRB: reqs, BindingBytes: bytes}
	}
	up := map[string]float64{"PUT resourcebindings/status": 4, "PATCH resourcebindings": 3, "GET works": 9}
	pa := map[string]float64{"PUT resourcebindings/status": 5, "PATCH resourcebindings": 2, "GET works": 20}
	res := &Result{N: 100, Machine: "2 cores", HistoryLimit: 5, Setup: Setup{Patched: "p", Upstream: "u", NodesPerMember: 4, Members: 3},
		Runs: []Run{
			run(config.FlavourUpstream, 1, 50, 50, 40, up, 3800), run(config.FlavourPatched, 1, 50, 51, 40.5, pa, 4200),
			run(config.FlavourUpstream, 2, 40, 40, 41, up, 3800), run(config.FlavourPatched, 2, 40, 42, 41.2, pa, 4200),
		}}
	summarize(res)
	var b bytes.Buffer
	writeReport(&b, res)
	out := b.String()
	for _, want := range []string{
		"N = 100, 2 round(s), 3 members of 4 nodes",
		"| bindings failed over (per round) | 50, 40 | 50, 40 | — | — |",
		"| drain time per failed-over binding | 1.000 s | 1.035 s (1.020 s–1.050 s) | **1.035** | ≤ 1.03 ✗ |",
		"(**+0.35**) | ≤ 1 extra ✓ |",
		"history at the cap (5 items) ≈ 2000 B | history ≤ 2 KiB at the cap ✓ |",
		"| 1 | 1.020 | +0.50 |\n| 2 | 1.050 | +0.20 |",
		"| `PATCH resourcebindings` | 3.00 | 2.00 | -1.00 |\n| `PUT resourcebindings/status` | 4.00 | 5.00 | +1.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "GET works") {
		t.Errorf("reads are not writes:\n%s", out)
	}
}
