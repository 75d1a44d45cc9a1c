package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RuncFlag is the argument the lab's dockerd passes first to the OCI runtime
// wrapper (daemon.json "runtimeArgs"): the runc it hands each call on to.
const RuncFlag = "--lab-runc"

// runcGlobalValueFlags are runc's global flags that take a value.
var runcGlobalValueFlags = map[string]bool{
	"--root": true, "--log": true, "--log-format": true, "--criu": true, "--rootless": true,
}

// RuntimeCall is one call of the OCI runtime as containerd's shim makes it:
// runc [global flags] COMMAND [flags] ID.
type RuntimeCall struct {
	// Runc is the runtime to hand the call on to.
	Runc string
	// Args are the arguments for Runc (without the wrapper's own flag).
	Args []string
	// Command is runc's command (create, run, exec, start, kill, ...).
	Command string
	// SpecFile is the file whose capabilities must fit the bounding set:
	// the bundle's config.json for create and run, the process spec for exec;
	// empty for every other command.
	SpecFile string
}

// ParseRuntimeCall reads the wrapper's arguments. cwd is the bundle when
// create or run names none (runc's rule).
func ParseRuntimeCall(args []string, cwd string) (RuntimeCall, error) {
	c := RuntimeCall{Runc: "runc"}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, RuncFlag+"="); ok {
			c.Runc = v
			continue
		}
		c.Args = append(c.Args, a)
	}
	cmdAt := -1
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if !strings.HasPrefix(a, "-") {
			cmdAt = i
			break
		}
		if runcGlobalValueFlags[a] {
			i++
		}
	}
	if cmdAt < 0 {
		return c, nil // runc --version, --help: nothing to adjust
	}
	c.Command = c.Args[cmdAt]
	var fileFlags []string
	switch c.Command {
	case "create", "run":
		fileFlags = []string{"--bundle", "-b"}
	case "exec":
		fileFlags = []string{"--process", "-p"}
	default:
		return c, nil
	}
	value := ""
	for i := cmdAt + 1; i < len(c.Args); i++ {
		a := c.Args[i]
		for _, f := range fileFlags {
			if a == f {
				if i+1 >= len(c.Args) {
					return c, fmt.Errorf("runc %s: %s without a value", c.Command, f)
				}
				value = c.Args[i+1]
			} else if v, ok := strings.CutPrefix(a, f+"="); ok {
				value = v
			}
		}
	}
	switch c.Command {
	case "create", "run":
		if value == "" {
			value = cwd
		}
		c.SpecFile = filepath.Join(value, "config.json")
	case "exec":
		// exec without --process takes the process from its arguments;
		// runc then keeps the container's capabilities, already fitted at create.
		c.SpecFile = value
	}
	return c, nil
}

// FitCapabilities removes from the spec file every capability the bounding
// set lacks: from process.capabilities of a bundle's config.json, or from
// capabilities of an exec's process spec. It returns what it removed; a file
// with nothing to remove is left untouched.
func FitCapabilities(path string, bnd BoundingSet, processSpec bool) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	process := doc
	if !processSpec {
		p, ok := doc["process"].(map[string]any)
		if !ok {
			return nil, nil
		}
		process = p
	}
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return nil, nil
	}
	removed := map[string]bool{}
	for _, set := range []string{"bounding", "effective", "inheritable", "permitted", "ambient"} {
		list, ok := caps[set].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, v := range list {
			if name, ok := v.(string); ok && !bnd.Has(name) {
				removed[name] = true
				continue
			}
			kept = append(kept, v)
		}
		caps[set] = kept
	}
	if len(removed) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, out, info.Mode().Perm()); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(removed))
	for _, n := range capabilityNames {
		if removed[n] {
			names = append(names, n)
		}
	}
	return names, nil
}
