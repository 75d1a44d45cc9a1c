package main

import (
	"fmt"
	"html"
	"os"
	"sort"
	"strings"
)

// plot draws drain time against N for upstream and patched (median with
// min-max bars) from result files, as an SVG: go run ./bench plot OUT.svg RESULT.json...
func plot(out string, files []string) error {
	type point struct{ n, med, lo, hi float64 }
	series := map[string][]point{}
	for _, f := range files {
		r, err := readResult(f)
		if err != nil {
			return err
		}
		for _, fl := range []string{"upstream", "patched"} {
			s := r.Medians[fl+"/drainSeconds"]
			series[fl] = append(series[fl], point{float64(r.N), s.Median, s.Min, s.Max})
		}
	}
	maxN, maxY := 1.0, 1.0
	for _, ps := range series {
		sort.Slice(ps, func(i, j int) bool { return ps[i].n < ps[j].n })
		for _, p := range ps {
			if p.n > maxN {
				maxN = p.n
			}
			if p.hi > maxY {
				maxY = p.hi
			}
		}
	}
	const w, h, l, r, t, bt = 640.0, 400.0, 60.0, 20.0, 40.0, 50.0
	x := func(n float64) float64 { return l + (w-l-r)*n/maxN }
	y := func(v float64) float64 { return h - bt - (h-t-bt)*v/(maxY*1.1) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", l,
		html.EscapeString("Drain time after a NoExecute taint vs bindings (median, min-max)"))
	fmt.Fprintf(&s, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n",
		l, h-bt, w-r, h-bt, l, t, l, h-bt)
	for i := 0; i <= 4; i++ {
		v := maxY * 1.1 * float64(i) / 4
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="end">%.0fs</text>`+"\n", l-6, y(v)+4, v)
		n := maxN * float64(i) / 4
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="middle">%.0f</text>`+"\n", x(n), h-bt+18, n)
	}
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="middle">bindings (Deployments)</text>`+"\n", (l+w-r)/2, h-12)
	colors := map[string]string{"upstream": "#888", "patched": "#326ce5"}
	for i, fl := range []string{"upstream", "patched"} {
		ps := series[fl]
		var path []string
		for _, p := range ps {
			path = append(path, fmt.Sprintf("%.1f,%.1f", x(p.n), y(p.med)))
			fmt.Fprintf(&s, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/><circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n",
				x(p.n), y(p.lo), x(p.n), y(p.hi), colors[fl], x(p.n), y(p.med), colors[fl])
		}
		fmt.Fprintf(&s, `<polyline points="%s" fill="none" stroke="%s"/>`+"\n", strings.Join(path, " "), colors[fl])
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			w-r-110, t+float64(i)*16, colors[fl], w-r-95, t+float64(i)*16+9, fl)
	}
	s.WriteString("</svg>\n")
	return os.WriteFile(out, []byte(s.String()), 0o644)
}
