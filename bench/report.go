package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/karmada-failover/lab/lab/config"
)

// report writes the tables of docs/benchmarks.md for the result file path:
// `go run ./bench report _output/bench/result.json`.
func report(w io.Writer, path string) error {
	res, err := readResult(path)
	if err != nil {
		return err
	}
	if len(res.Runs) == 0 {
		return fmt.Errorf("%s has no runs", path)
	}
	summarize(res)
	writeReport(w, res)
	return nil
}

func writeReport(w io.Writer, res *Result) {
	rounds := len(res.Runs) / 2
	fmt.Fprintf(w, "Patched %s vs upstream %s, N = %d, %d round(s), %d members of %d nodes; %s.\n\n",
		res.Setup.Patched, res.Setup.Upstream, res.N, rounds, res.Setup.Members, res.Setup.NodesPerMember, res.Machine)
	m := func(flavour config.Flavour, key string) Summary { return res.Medians[string(flavour)+"/"+key] }
	cell := func(s Summary, format string) string {
		v := fmt.Sprintf(format, s.Median)
		if rounds > 1 && s.Min != s.Max {
			v += fmt.Sprintf(" ("+format+"–"+format+")", s.Min, s.Max)
		}
		return v
	}
	fmt.Fprintln(w, "| | upstream (median, min–max) | patched (median, min–max) | patched / upstream | goal |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	row := func(name, key, format, goal string, ratio string) {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, cell(m(config.FlavourUpstream, key), format), cell(m(config.FlavourPatched, key), format), ratio, goal)
	}
	ratio := func(key string) string { return fmt.Sprintf("%.3f", res.Ratios[key]) }
	failed := func(f config.Flavour) string {
		var n []string
		for _, r := range res.Runs {
			if r.Flavour == f {
				n = append(n, fmt.Sprint(r.FailedOver))
			}
		}
		return strings.Join(n, ", ")
	}
	fmt.Fprintf(w, "| bindings failed over (per round) | %s | %s | — | — |\n", failed(config.FlavourUpstream), failed(config.FlavourPatched))
	row("drain time", "drainSeconds", "%.1f s", "—", ratio("drainSeconds"))
	drain := ratio("drainSecondsPerFailedOverBinding")
	row("drain time per failed-over binding", "drainSecondsPerFailedOverBinding", "%.3f s", mark(res.Ratios["drainSecondsPerFailedOverBinding"] <= 1.03, "≤ 1.03"), "**"+drain+"**")
	extra := res.Ratios["extraWritesPerBinding"]
	row("API writes per failed-over binding", "apiWritesPerFailedOverBinding", "%.2f", mark(extra <= 1, "≤ 1 extra"),
		fmt.Sprintf("%s (**%+.2f**)", ratio("apiWritesPerFailedOverBinding"), extra))
	row("karmada-controller-manager CPU during the drain", "controllerManagerCPUSeconds", "%.1f s", "—", ratio("controllerManagerCPUSeconds"))
	row("karmada-scheduler CPU during the drain", "schedulerCPUSeconds", "%.1f s", "—", ratio("schedulerCPUSeconds"))
	row("karmada-controller-manager peak RSS", "controllerManagerPeakRSSKiB", "%.0f KiB", "—", ratio("controllerManagerPeakRSSKiB"))
	capBytes := res.Ratios["historyBytesAtCap"]
	row("ResourceBinding size after one failover", "meanFailedOverBindingBytes", "%.0f B",
		mark(capBytes <= 2048, "history ≤ 2 KiB at the cap"), fmt.Sprintf("history at the cap (%d items) ≈ %.0f B", historyLimit(res), capBytes))

	if len(res.RoundRatios) > 0 {
		fmt.Fprintln(w, "\nPer round (upstream and patched measured back to back):")
		fmt.Fprintln(w, "\n| round | drain per failed-over binding, patched / upstream | API writes per failed-over binding, patched − upstream |")
		fmt.Fprintln(w, "| --- | --- | --- |")
		for _, r := range res.RoundRatios {
			fmt.Fprintf(w, "| %d | %.3f | %+.2f |\n", r.Round, r.DrainPerBinding, r.ExtraWrites)
		}
	}

	// Where the writes differ: median of each request's count per failed-over binding.
	per := func(f config.Flavour) map[string][]float64 {
		out := map[string][]float64{}
		for _, r := range res.Runs {
			if r.Flavour != f {
				continue
			}
			for k, v := range r.RequestsPerRB {
				out[k] = append(out[k], v)
			}
		}
		return out
	}
	up, pa := per(config.FlavourUpstream), per(config.FlavourPatched)
	type diff struct {
		req  string
		d    float64
		u, p float64
	}
	var diffs []diff
	for k := range mergeKeys(up, pa) {
		if !isWrite(k) {
			continue
		}
		u, p := summary(up[k]).Median, summary(pa[k]).Median
		if math.Abs(p-u) >= 0.05 {
			diffs = append(diffs, diff{k, p - u, u, p})
		}
	}
	sort.Slice(diffs, func(i, j int) bool {
		if a, b := math.Abs(diffs[i].d), math.Abs(diffs[j].d); a != b {
			return a > b
		}
		return diffs[i].req < diffs[j].req
	})
	if len(diffs) > 0 {
		fmt.Fprintln(w, "\nWrites per failed-over binding that differ by 0.05 or more (medians):")
		fmt.Fprintln(w, "\n| request | upstream | patched | patched − upstream |")
		fmt.Fprintln(w, "| --- | --- | --- | --- |")
		for _, d := range diffs {
			fmt.Fprintf(w, "| `%s` | %.2f | %.2f | %+.2f |\n", d.req, d.u, d.p, d.d)
		}
	}
}

func mark(ok bool, goal string) string {
	if ok {
		return goal + " ✓"
	}
	return goal + " ✗"
}

func mergeKeys(a, b map[string][]float64) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// isWrite: the request keys are "<VERB> <resource>" as the API server counts them.
func isWrite(req string) bool {
	verb, _, _ := strings.Cut(req, " ")
	switch verb {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}
