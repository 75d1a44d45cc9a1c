package framework

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Timeline records what a failover scenario observed and when: failure
// injected, cluster NotReady or workload unhealthy, evicted, scheduled,
// applied, restored. It is drawn as an SVG so a reader sees the failover at a
// glance, and listed in the run's report.md.
type Timeline struct {
	Title string
	mu    sync.Mutex
	start time.Time
	marks []Mark
}

// Mark is one observed moment.
type Mark struct {
	Label string
	At    time.Time
}

// NewTimeline starts a timeline now.
func NewTimeline(title string) *Timeline {
	return &Timeline{Title: title, start: time.Now()}
}

// Mark records label at the current time (the first mark of a label wins).
func (t *Timeline) Mark(label string) {
	t.MarkAt(label, time.Now())
}

// MarkAt records label at a given time, e.g. a timestamp read from an object.
func (t *Timeline) MarkAt(label string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.marks {
		if m.Label == label {
			return
		}
	}
	t.marks = append(t.marks, Mark{Label: label, At: at})
}

// Marks returns the marks in time order.
func (t *Timeline) Marks() []Mark {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]Mark(nil), t.marks...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].At.Before(out[j-1].At); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Since returns the seconds between two marks, or -1 if one is missing.
func (t *Timeline) Since(from, to string) float64 {
	var a, b *time.Time
	for _, m := range t.Marks() {
		m := m
		if m.Label == from {
			a = &m.At
		}
		if m.Label == to {
			b = &m.At
		}
	}
	if a == nil || b == nil {
		return -1
	}
	return b.Sub(*a).Seconds()
}

// SVG draws the timeline: a time axis with one labelled tick per mark.
func (t *Timeline) SVG() string {
	marks := t.Marks()
	const width, left, right, rowH, top = 900.0, 20.0, 220.0, 26.0, 50.0
	height := top + rowH*float64(len(marks)) + 40
	origin := t.start
	if len(marks) > 0 && marks[0].At.Before(origin) {
		origin = marks[0].At
	}
	span := 1.0
	if len(marks) > 0 {
		span = marks[len(marks)-1].At.Sub(origin).Seconds()
		if span < 1 {
			span = 1
		}
	}
	x := func(at time.Time) float64 {
		return left + (width-left-right)*at.Sub(origin).Seconds()/span
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="20" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(t.Title))
	axisY := height - 25
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, axisY, width-right, axisY)
	for s := 0.0; s <= span; s += tickStep(span) {
		xx := left + (width-left-right)*s/span
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="black"/><text x="%.1f" y="%.0f" text-anchor="middle">%.0fs</text>`+"\n", xx, axisY, xx, axisY+4, xx, axisY+16, s)
	}
	for i, m := range marks {
		y := top + rowH*float64(i)
		xx := x(m.At)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#bbb" stroke-dasharray="3,3"/>`+"\n", xx, y, xx, axisY)
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.0f" r="5" fill="#326ce5"/><text x="%.1f" y="%.0f">%s (%.1fs)</text>`+"\n",
			xx, y, xx+9, y+4, html.EscapeString(m.Label), m.At.Sub(origin).Seconds())
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func tickStep(span float64) float64 {
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300} {
		if span/s <= 12 {
			return s
		}
	}
	return 600
}

// Write saves the SVG under dir and appends the timeline to dir/report.md.
func (t *Timeline) Write(dir, file string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(t.SVG()), 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "report.md"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(f, "## %s\n\n![%s](%s)\n\n| moment | seconds |\n| --- | --- |\n", t.Title, t.Title, file)
	marks := t.Marks()
	for _, m := range marks {
		fmt.Fprintf(f, "| %s | %.1f |\n", m.Label, m.At.Sub(marks[0].At).Seconds())
	}
	fmt.Fprintln(f)
	return nil
}
