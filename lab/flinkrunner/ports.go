package flinkrunner

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// ParsePortRange parses "lo-hi" (inclusive).
func ParsePortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return 0, 0, fmt.Errorf("port range %q: want lo-hi", s)
	}
	if lo, err = strconv.Atoi(strings.TrimSpace(a)); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
		return 0, 0, fmt.Errorf("port range %q: %w", s, err)
	}
	if lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("port range %q: want 1 <= lo <= hi <= 65535", s)
	}
	return lo, hi, nil
}

// PortAllocator hands out REST ports from a range, round-robin, skipping ports
// it has handed out and ports something else is listening on (127.0.0.1).
type PortAllocator struct {
	mu     sync.Mutex
	lo, hi int
	next   int
	used   map[int]bool
	// Free reports whether a port can be bound; binds 127.0.0.1:port when nil.
	Free func(port int) bool
}

// NewPortAllocator allocates from [lo, hi].
func NewPortAllocator(lo, hi int) *PortAllocator {
	return &PortAllocator{lo: lo, hi: hi, next: lo, used: map[int]bool{}}
}

// Allocate returns a free port.
func (a *PortAllocator) Allocate() (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	free := a.Free
	if free == nil {
		free = canBind
	}
	n := a.hi - a.lo + 1
	for i := 0; i < n; i++ {
		p := a.next
		a.next++
		if a.next > a.hi {
			a.next = a.lo
		}
		if a.used[p] || !free(p) {
			continue
		}
		a.used[p] = true
		return p, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d (%d in use by this runner)", a.lo, a.hi, len(a.used))
}

// Release returns a port to the pool.
func (a *PortAllocator) Release(p int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.used, p)
}

// InUse is the number of ports handed out.
func (a *PortAllocator) InUse() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.used)
}

func canBind(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
