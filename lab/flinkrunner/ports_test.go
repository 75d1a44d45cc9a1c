package flinkrunner

import (
	"net"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		ok     bool
	}{
		{"24700-24799", 24700, 24799, true},
		{" 1 - 1 ", 1, 1, true},
		{"24799-24700", 0, 0, false},
		{"0-10", 0, 0, false},
		{"1-70000", 0, 0, false},
		{"24700", 0, 0, false},
		{"a-b", 0, 0, false},
	} {
		lo, hi, err := ParsePortRange(tc.in)
		if (err == nil) != tc.ok || lo != tc.lo || hi != tc.hi {
			t.Errorf("ParsePortRange(%q) = %d, %d, %v", tc.in, lo, hi, err)
		}
	}
}

func TestPortAllocator(t *testing.T) {
	busy := map[int]bool{101: true}
	a := NewPortAllocator(100, 103)
	a.Free = func(p int) bool { return !busy[p] }
	var got []int
	for i := 0; i < 3; i++ {
		p, err := a.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if got[0] != 100 || got[1] != 102 || got[2] != 103 {
		t.Fatalf("allocated %v, want [100 102 103] (101 is busy)", got)
	}
	if _, err := a.Allocate(); err == nil {
		t.Fatal("exhausted range: want error")
	}
	a.Release(102)
	if a.InUse() != 2 {
		t.Fatalf("in use %d", a.InUse())
	}
	busy[101] = false
	// Round-robin: continues after the last handed-out port, so 100 (in use) is skipped and 101 comes next.
	if p, _ := a.Allocate(); p != 101 {
		t.Fatalf("after release got %d, want 101", p)
	}
	if p, _ := a.Allocate(); p != 102 {
		t.Fatalf("got %d, want 102", p)
	}
}

func TestPortAllocatorSkipsBoundPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	a := NewPortAllocator(port, port)
	if p, err := a.Allocate(); err == nil {
		t.Fatalf("allocated bound port %d", p)
	}
	l.Close()
	if p, err := a.Allocate(); err != nil || p != port {
		t.Fatalf("after close: %d, %v", p, err)
	}
}
