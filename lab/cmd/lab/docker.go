package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
	"github.com/karmada-failover/lab/lab/kind/engine"
)

// dockerEngine is `lab docker`: which Docker engine the kind lab uses and why
// (choose: starts nothing), the lab's own dockerd (start, stop, status), and
// the DOCKER_HOST of the engine in use (env, for eval).
func dockerEngine(root string, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: lab docker choose|start|stop|status|env")
	}
	cfg, err := config.LoadProvider(root, config.ProviderKind)
	if err != nil {
		return err
	}
	o := kind.EngineOptions(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "choose":
		e, err := engine.Choose(ctx, o)
		if err != nil {
			return err
		}
		fmt.Println("Docker engine of the kind lab:", e)
		return nil
	case "start":
		e, err := engine.Choose(ctx, o)
		if err != nil {
			return err
		}
		if _, running := engine.Running(o); e.Own && !running {
			why := e.Reason
			if e, err = engine.Start(ctx, o); err != nil {
				return err
			}
			e.Reason = why + "; started: " + e.Reason
		}
		fmt.Println("Docker engine of the kind lab:", e)
		return nil
	case "stop":
		pid, running := engine.Running(o)
		if err := engine.Stop(ctx, o); err != nil {
			return err
		}
		if running {
			fmt.Printf("The lab's dockerd (pid %d) is stopped.\n", pid)
		}
		return nil
	case "status":
		fmt.Println("Docker engine of the kind lab:", engine.Current(o))
		return nil
	case "env":
		// For eval in a shell: the DOCKER_HOST of the engine in use, if not docker's default.
		for _, kv := range engine.Current(o).Env() {
			fmt.Println("export " + kv)
		}
		return nil
	}
	return errors.New("usage: lab docker choose|start|stop|status|env")
}
