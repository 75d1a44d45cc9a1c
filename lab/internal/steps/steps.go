// Package steps runs the lab's bring-up as a list of named steps, in the
// manner of kind's create pipeline: each step prints a line when it starts and
// a tick with its duration when it ends, and the first failure stops the run
// with the step's name in the error.
package steps

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Step is one stage of a pipeline.
type Step struct {
	Name string
	Run  func(ctx context.Context) error
}

// Timing records how long a step took.
type Timing struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"durationNanoseconds"`
}

// Run runs steps in order and returns their timings.
func Run(ctx context.Context, out io.Writer, list []Step) ([]Timing, error) {
	var timings []Timing
	for _, s := range list {
		start := time.Now()
		fmt.Fprintf(out, " • %s\n", s.Name)
		if err := s.Run(ctx); err != nil {
			fmt.Fprintf(out, " ✗ %s\n", s.Name)
			return timings, fmt.Errorf("%s: %w", s.Name, err)
		}
		d := time.Since(start)
		timings = append(timings, Timing{Name: s.Name, Duration: d})
		fmt.Fprintf(out, " ✓ %s (%.1fs)\n", s.Name, d.Seconds())
	}
	return timings, nil
}
