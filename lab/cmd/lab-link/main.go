// Command lab-link is the hermetic lab's network between Karmada and one member
// cluster (lab/internal/link): it forwards --listen to the member's API server
// at --target, and its control endpoint on --control cuts and restores the
// link (`lab member partition|heal|flap` call it):
//
//	GET  /healthz    200 while the process runs
//	GET  /state      {"target", "partitioned", "changes", "connections"}
//	POST /partition  stop all traffic (connections hang; nothing is refused or reset)
//	POST /heal       let it through again
//
// Both addresses must be on 127.0.0.1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/karmada-failover/lab/lab/internal/link"
)

func main() {
	listen := flag.String("listen", "", "address Karmada connects to (127.0.0.1:PORT)")
	target := flag.String("target", "", "the member's API server (127.0.0.1:PORT)")
	control := flag.String("control", "", "control endpoint (127.0.0.1:PORT)")
	flag.Parse()
	if err := run(*listen, *target, *control); err != nil {
		fmt.Fprintln(os.Stderr, "lab-link:", err)
		os.Exit(1)
	}
}

func loopback(name, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--%s %q: %w", name, addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--%s %q: the lab binds to 127.0.0.1 only", name, addr)
	}
	return nil
}

func run(listen, target, control string) error {
	for name, addr := range map[string]string{"listen": listen, "target": target, "control": control} {
		if err := loopback(name, addr); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l := link.New(target)
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(l.State())
	})
	mux.HandleFunc("POST /partition", func(w http.ResponseWriter, _ *http.Request) {
		l.Partition()
		log.Printf("partitioned: %s", l)
		_ = json.NewEncoder(w).Encode(l.State())
	})
	mux.HandleFunc("POST /heal", func(w http.ResponseWriter, _ *http.Request) {
		l.Heal()
		log.Printf("healed: %s", l)
		_ = json.NewEncoder(w).Encode(l.State())
	})
	srv := &http.Server{Addr: control, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errs := make(chan error, 2)
	go func() { errs <- l.Serve(ctx, ln) }()
	go func() {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			errs <- err
		}
	}()
	log.Printf("forwarding %s to %s, control on %s", listen, target, control)
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	stop()
	return err
}
