package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/karmada-failover/lab/e2e/framework"
)

// flinkRTO summarises Flink failover records (the e2e scenarios' JSON lines,
// framework.FlinkFailoverRecordFile) per fault: one row per run, then p50 and
// p90 of every phase. It fails when a run lost or duplicated a record, or did
// not restore the latest completed checkpoint.
//
//	go run ./bench flink-rto _output/e2e/*/flink-failovers.jsonl
func flinkRTO(w io.Writer, files []string) error {
	byFault := map[string][]framework.FlinkFailoverRecord{}
	var faults []string
	for _, f := range files {
		recs, err := readRecords(f)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if _, ok := byFault[r.Fault]; !ok {
				faults = append(faults, r.Fault)
			}
			byFault[r.Fault] = append(byFault[r.Fault], r)
		}
	}
	if len(faults) == 0 {
		return fmt.Errorf("no Flink failover records in %s", strings.Join(files, ", "))
	}
	sort.Strings(faults)
	var bad []string
	for _, fault := range faults {
		recs := byFault[fault]
		fmt.Fprintf(w, "\n### %s: %d runs\n\n", fault, len(recs))
		fmt.Fprintln(w, "| run | detection | toleration, eviction, scheduling | apply | webhook, JVM start, restore (→ RUNNING) | first record | **RTO** | restored / latest completed | missing | duplicated | reprocessed |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
		cols := make([][]float64, 6)
		for i, r := range recs {
			phases := []float64{r.Detection, r.Scheduled, r.Applied, r.Running, r.FirstRecord, r.RTO}
			for j, v := range phases {
				cols[j] = append(cols[j], v)
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | **%s** | chk-%d / chk-%d | %d | %d | %d |\n", i+1,
				secs(r.Detection), secs(r.Scheduled), secs(r.Applied), secs(r.Running), secs(r.FirstRecord), secs(r.RTO),
				r.RestoredID, r.LatestID, r.Missing, r.Duplicated, r.Reprocessed)
			if r.Missing != 0 || r.Duplicated != 0 || r.RestoredID != r.LatestID {
				bad = append(bad, fmt.Sprintf("%s run %d: missing=%d duplicated=%d restored chk-%d, latest chk-%d", fault, i+1, r.Missing, r.Duplicated, r.RestoredID, r.LatestID))
			}
		}
		for _, q := range []float64{0.5, 0.9} {
			fmt.Fprintf(w, "| p%.0f |", q*100)
			for j, c := range cols {
				v := quantile(c, q)
				if j == 5 {
					fmt.Fprintf(w, " **%s** |", secs(v))
				} else {
					fmt.Fprintf(w, " %s |", secs(v))
				}
			}
			fmt.Fprintln(w, " | | | |")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("not exactly once from the latest checkpoint: %s", strings.Join(bad, "; "))
	}
	return nil
}

func readRecords(file string) ([]framework.FlinkFailoverRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []framework.FlinkFailoverRecord
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r framework.FlinkFailoverRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// quantile is the nearest-rank quantile of the known (>= 0) values, -1 if none.
func quantile(vs []float64, q float64) float64 {
	var known []float64
	for _, v := range vs {
		if v >= 0 {
			known = append(known, v)
		}
	}
	if len(known) == 0 {
		return -1
	}
	sort.Float64s(known)
	i := int(math.Ceil(q*float64(len(known)))) - 1
	return known[max(i, 0)]
}

func secs(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", v)
}
