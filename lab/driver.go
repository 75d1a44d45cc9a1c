package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/karmada-failover/lab/lab/internal/steps"
)

// Plan is how a provider brings its lab up: the record it starts with and the steps,
// in order. The provider's checks run when it makes the plan, before anything starts.
type Plan struct {
	// State is the record, written before the first step (a lab that did not come up
	// can still be found and taken down) and again after the steps ran.
	State *State
	Steps []steps.Step
	// Recorded adds to the record what the steps found out (ran to the end or not);
	// nil: nothing.
	Recorded func(st *State)
}

// Up brings p's lab up, the same for every provider: the provider's plan, then its
// steps in order with each one's time, the record written first and last (Ready once
// every step passed). A lab that did not come up is taken down (Down), unless
// o.Retain keeps it for inspection. It returns ErrAlreadyUp when the lab is up.
func Up(ctx context.Context, p Provider, o UpOptions) error {
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	cfg := p.Config()
	plan, err := p.Plan(ctx, out)
	if err != nil {
		return err
	}
	st := plan.State
	if err := WriteState(cfg, st); err != nil {
		return err
	}
	timings, err := steps.Run(ctx, out, plan.Steps)
	st.Steps = timings
	if plan.Recorded != nil {
		plan.Recorded(st)
	}
	st.Ready = err == nil
	if werr := WriteState(cfg, st); werr != nil {
		err = errors.Join(err, werr)
	}
	if err == nil {
		return nil
	}
	if o.Retain {
		fmt.Fprintf(out, "LAB_RETAIN=1: the partial lab is left as it is; logs in %s; `make lab-down` takes it down\n", cfg.LogDir())
		return err
	}
	fmt.Fprintf(out, "The lab did not come up: taking it down (LAB_RETAIN=1 keeps it for inspection); logs stay in %s\n", cfg.LogDir())
	if derr := Down(context.WithoutCancel(ctx), p, out); derr != nil {
		err = errors.Join(err, fmt.Errorf("taking the partial lab down: %w", derr))
	}
	return err
}

// Down takes p's lab down (the provider's TearDown) and marks its record down. The
// record stays: what was brought up, with which settings, its steps' times, and when
// it was taken down.
func Down(ctx context.Context, p Provider, out io.Writer) error {
	if out == nil {
		out = io.Discard
	}
	err := p.TearDown(ctx, out)
	st, rerr := p.State()
	if errors.Is(rerr, os.ErrNotExist) {
		return err
	}
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	st.Ready = false
	if err == nil {
		now := time.Now().UTC()
		st.StoppedAt = &now
	}
	return errors.Join(err, WriteState(p.Config(), st))
}

// Clean takes p's lab down and removes its folder.
func Clean(ctx context.Context, p Provider, out io.Writer) error {
	if err := Down(ctx, p, out); err != nil {
		return err
	}
	return os.RemoveAll(p.Config().Dir)
}
