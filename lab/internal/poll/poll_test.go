package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	if err := Until(context.Background(), time.Second, time.Millisecond, "three calls", func(context.Context) (bool, error) {
		n++
		return n == 3, nil
	}); err != nil || n != 3 {
		t.Fatalf("err %v after %d calls", err, n)
	}
	err := Until(context.Background(), 50*time.Millisecond, 5*time.Millisecond, "the member", func(context.Context) (bool, error) {
		return false, errors.New("connection refused")
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for the member: connection refused") {
		t.Fatalf("err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Until(ctx, time.Minute, time.Millisecond, "nothing", func(context.Context) (bool, error) { return false, nil }); err == nil {
		t.Fatal("a cancelled context did not stop the wait")
	}
}
