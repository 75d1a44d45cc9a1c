// Package pod runs one process of the hermetic lab the way a Kubernetes pod
// runs it, for software that exists only as in-cluster software and has no
// flags for anything else: Kyverno's admission controller, which listens on
// every address (":<port>", no bind flag) and reads its ServiceAccount token
// from the fixed in-cluster path for its apiCall service calls.
//
// The process gets its own network namespace with only a loopback, its own
// PID namespace (whatever it starts ends with it), and its own mount namespace in which the ServiceAccount volume a kubelet would project
// is at /var/run/secrets/kubernetes.io/serviceaccount (token, ca.crt,
// namespace), the token requested with TokenRequest and renewed before it
// expires, as the kubelet does. Nothing it binds is visible outside; the lab
// reaches it, and it reaches the lab, only through the ports the Spec names,
// forwarded through Unix sockets (a file system path crosses network
// namespaces): Expose publishes a pod port on the host's 127.0.0.1, Reach makes
// a host address answer on a pod port (the "Service" it calls).
//
// It needs Linux namespaces: as root, or as a user where unprivileged user
// namespaces are allowed (then the process runs as root of its own user
// namespace, mapped to the caller). Elsewhere Run says so and does nothing.
package pod

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// ServiceAccountPath is where a pod's process finds its ServiceAccount token.
const ServiceAccountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// Expose publishes the pod's 127.0.0.1:Pod on the host address Host.
type Expose struct {
	Host string
	Pod  int
}

// Reach makes the pod's 127.0.0.1:Pod lead to the host address Host.
type Reach struct {
	Pod  int
	Host string
}

// Token is the ServiceAccount whose token the pod gets.
type Token struct {
	Kubeconfig string
	Context    string
	Namespace  string
	Name       string
	// TTL is the token's requested lifetime; it is renewed at 80 % of it.
	TTL time.Duration
}

// Spec is what Run runs.
type Spec struct {
	Expose  []Expose
	Reach   []Reach
	Token   *Token
	Command []string
	// Grace is how long a stopped pod's process has between SIGTERM and SIGKILL.
	Grace time.Duration
	// Dir holds the pod's sockets and ServiceAccount volume; it is emptied
	// when the pod starts and removed when it ends. "" means a new folder
	// under the system's temporary directory. Unix socket paths are short:
	// Dir must leave room for them (maxDirLen).
	Dir string
}

// maxDirLen leaves room in a Unix socket path (108 bytes) for "/expose-65535.sock".
const maxDirLen = 90

// ParseExpose parses HOST:PORT=POD_PORT.
func ParseExpose(s string) (Expose, error) {
	host, pod, ok := strings.Cut(s, "=")
	p, err := parseMapping("expose", s, "127.0.0.1:HOST_PORT=POD_PORT", host, pod, ok)
	return Expose{Host: host, Pod: p}, err
}

// ParseReach parses POD_PORT=HOST:PORT.
func ParseReach(s string) (Reach, error) {
	pod, host, ok := strings.Cut(s, "=")
	p, err := parseMapping("reach", s, "POD_PORT=127.0.0.1:HOST_PORT", host, pod, ok)
	return Reach{Pod: p, Host: host}, err
}

// parseMapping checks the two sides of a --expose or --reach value and
// returns the pod port.
func parseMapping(flag, s, want, host, pod string, ok bool) (int, error) {
	if !ok {
		return 0, fmt.Errorf("--%s %q: want %s", flag, s, want)
	}
	p, err := parsePort(pod)
	if err != nil {
		return 0, fmt.Errorf("--%s %q: %w", flag, s, err)
	}
	if err := loopback(host); err != nil {
		return 0, fmt.Errorf("--%s %q: %w", flag, s, err)
	}
	return p, nil
}

// ParseServiceAccount parses NAMESPACE/NAME.
func ParseServiceAccount(s string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(s, "/")
	if !ok || namespace == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--service-account %q: want NAMESPACE/NAME", s)
	}
	return namespace, name, nil
}

func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %q: want 1-65535", s)
	}
	return p, nil
}

// loopback accepts a 127.0.0.1 (or other loopback) address: the lab binds nothing else.
func loopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: the lab binds to 127.0.0.1 only", addr)
	}
	_, err = parsePort(port)
	return err
}

func (s Spec) validate() error {
	if len(s.Command) == 0 {
		return fmt.Errorf("no command to run in the pod")
	}
	seen := map[int]string{}
	for _, e := range s.Expose {
		if err := loopback(e.Host); err != nil {
			return err
		}
		seen[e.Pod] = "exposed"
	}
	for _, r := range s.Reach {
		if err := loopback(r.Host); err != nil {
			return err
		}
		if what, ok := seen[r.Pod]; ok {
			return fmt.Errorf("pod port %d is both %s and reached: the pod's own process listens on an exposed port", r.Pod, what)
		}
		seen[r.Pod] = "reached"
	}
	if len(s.Dir) > maxDirLen {
		return fmt.Errorf("pod folder %s is %d bytes long: Unix socket paths leave %d (use a shorter --dir)", s.Dir, len(s.Dir), maxDirLen)
	}
	if t := s.Token; t != nil {
		if t.Namespace == "" || t.Name == "" {
			return fmt.Errorf("service account: want a namespace and a name")
		}
		if t.TTL < 10*time.Minute {
			return fmt.Errorf("token TTL %s: the API server refuses less than 10m", t.TTL)
		}
	}
	return nil
}

func exposeSocket(dir string, port int) string { return fmt.Sprintf("%s/expose-%d.sock", dir, port) }
func reachSocket(dir string, port int) string  { return fmt.Sprintf("%s/reach-%d.sock", dir, port) }
