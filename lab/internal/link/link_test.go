package link

import (
	"bufio"
	"context"
	"net"
	"testing"
	"time"
)

// echo serves line echo on 127.0.0.1 and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					s, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(s)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func serve(t *testing.T, l *Link) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = l.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

// roundTrip sends line on c and returns the reply, or "" when none arrives
// within wait.
func roundTrip(t *testing.T, c net.Conn, r *bufio.Reader, line string, wait time.Duration) string {
	t.Helper()
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	return reply(t, c, r, wait)
}

func reply(t *testing.T, c net.Conn, r *bufio.Reader, wait time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(wait))
	s, err := r.ReadString('\n')
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return ""
		}
		t.Fatal(err)
	}
	return s[:len(s)-1]
}

func TestPartitionHoldsTrafficWithoutResettingAndHealDeliversIt(t *testing.T) {
	l := New(echo(t))
	addr := serve(t, l)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got := roundTrip(t, c, r, "before", 2*time.Second); got != "before" {
		t.Fatalf("connected link: got %q", got)
	}

	l.Partition()
	if got := roundTrip(t, c, r, "during", 300*time.Millisecond); got != "" {
		t.Fatalf("a partitioned link delivered %q", got)
	}
	// A new connection is accepted (nothing refuses it) but carries nothing.
	c2, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("a partition must not refuse connections: %v", err)
	}
	defer c2.Close()
	r2 := bufio.NewReader(c2)
	if got := roundTrip(t, c2, r2, "new", 300*time.Millisecond); got != "" {
		t.Fatalf("a connection opened during the partition delivered %q", got)
	}
	if s := l.State(); !s.Partitioned || s.Changes != 1 {
		t.Fatalf("state %+v", s)
	}

	l.Heal()
	if got := reply(t, c, r, 2*time.Second); got != "during" {
		t.Fatalf("after the heal the held bytes arrive: got %q", got)
	}
	if got := reply(t, c2, r2, 2*time.Second); got != "new" {
		t.Fatalf("after the heal the new connection goes through: got %q", got)
	}
	if got := roundTrip(t, c, r, "after", 2*time.Second); got != "after" {
		t.Fatalf("healed link: got %q", got)
	}
}

func TestFlappingKeepsTheByteStreamIntact(t *testing.T) {
	l := New(echo(t))
	addr := serve(t, l)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				l.Heal()
				return
			case <-time.After(5 * time.Millisecond):
			}
			if i%2 == 0 {
				l.Partition()
			} else {
				l.Heal()
			}
		}
	}()
	for i := 0; i < 50; i++ {
		want := string(rune('a'+i%26)) + "-line"
		if got := roundTrip(t, c, r, want, 5*time.Second); got != want {
			close(stop)
			t.Fatalf("line %d: got %q, want %q", i, got, want)
		}
	}
	close(stop)
}

func TestADownTargetClosesTheConnection(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	target := ln.Addr().String()
	ln.Close() // nothing listens there: the member is down
	addr := serve(t, New(target))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("want the connection closed when the member is down")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection hung; a member that is down closes it")
	}
}
