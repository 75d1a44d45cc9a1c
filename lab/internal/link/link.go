// Package link is the lab's network between Karmada and a member cluster: a
// TCP forwarder that Karmada's Cluster apiEndpoint points at, in front of the
// member's API server. Everything else (the member's own components, its Flink
// jobs, the e2e suite's direct kubeconfig) reaches the member without it, so a
// partition cuts Karmada off while the member keeps running, as when the
// network between a control plane and a cluster fails.
//
// A partition drops traffic the way a broken network does, not the way a dead
// host refuses it: connections that exist stop carrying bytes (what was sent
// waits, as TCP retransmissions would), new connections are accepted and then
// hang. Nothing is reset, so clients see timeouts, not errors. Healing delivers
// the waiting bytes and lets the hanging connections through.
package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Link forwards connections to Target while connected.
type Link struct {
	Target string
	// Network is Target's network: "tcp" (the default) or "unix".
	Network string
	// DialTimeout bounds the dial to Target (default 5 s).
	DialTimeout time.Duration

	mu          sync.Mutex
	partitioned bool
	open        chan struct{} // closed while connected
	changes     int           // partition/heal transitions
	conns       int
}

// New returns a connected link to target.
func New(target string) *Link {
	open := make(chan struct{})
	close(open)
	return &Link{Target: target, open: open}
}

// State is what the control endpoint reports.
type State struct {
	Target      string `json:"target"`
	Partitioned bool   `json:"partitioned"`
	Changes     int    `json:"changes"`
	Connections int    `json:"connections"`
}

// State returns the link's current state.
func (l *Link) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return State{Target: l.Target, Partitioned: l.partitioned, Changes: l.changes, Connections: l.conns}
}

// Partition stops all traffic through the link.
func (l *Link) Partition() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.partitioned {
		return
	}
	l.partitioned = true
	l.open = make(chan struct{})
	l.changes++
}

// Heal lets traffic through again.
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.partitioned {
		return
	}
	l.partitioned = false
	close(l.open)
	l.changes++
}

// wait blocks while the link is partitioned.
func (l *Link) wait(ctx context.Context) error {
	for {
		l.mu.Lock()
		open := l.open
		l.mu.Unlock()
		select {
		case <-open:
			// Healed; but a partition may have started since open was read.
			l.mu.Lock()
			ok := !l.partitioned
			l.mu.Unlock()
			if ok {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Serve accepts connections on ln until ctx ends.
func (l *Link) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.forward(ctx, c)
		}()
	}
}

func (l *Link) forward(ctx context.Context, c net.Conn) {
	defer c.Close()
	l.mu.Lock()
	l.conns++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.conns--
		l.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A connection opened during a partition hangs until the heal.
	if err := l.wait(ctx); err != nil {
		return
	}
	timeout := l.DialTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	network := l.Network
	if network == "" {
		network = "tcp"
	}
	t, err := (&net.Dialer{Timeout: timeout}).DialContext(ctx, network, l.Target)
	if err != nil {
		return // the member is down: the client sees the connection close
	}
	defer t.Close()
	go func() {
		<-ctx.Done()
		c.Close()
		t.Close()
	}()
	done := make(chan struct{}, 2)
	go func() { l.pipe(ctx, t, c); done <- struct{}{} }()
	go func() { l.pipe(ctx, c, t); done <- struct{}{} }()
	<-done
}

// pipe copies src to dst, holding every chunk while the link is partitioned.
func (l *Link) pipe(ctx context.Context, dst io.Writer, src io.Reader) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if l.wait(ctx) != nil {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
			}
			return
		}
	}
}

// String describes the link.
func (l *Link) String() string {
	s := l.State()
	state := "connected"
	if s.Partitioned {
		state = "partitioned"
	}
	return fmt.Sprintf("link to %s: %s (%d connections, %d changes)", s.Target, state, s.Connections, s.Changes)
}
