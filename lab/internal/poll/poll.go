// Package poll waits for a condition with apimachinery's wait, and says what it waited for
// and the last reason it was not met when it gives up.
package poll

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Until checks cond every interval, at once first, until it returns true. An error from
// cond is retried and reported when timeout passes: "timed out after <timeout> waiting for
// <what>: <last error>". The context's end stops the wait too.
func Until(ctx context.Context, timeout, interval time.Duration, what string, cond func(context.Context) (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	switch {
	case err == nil:
		return nil
	case last != nil:
		return fmt.Errorf("timed out after %s waiting for %s: %w", timeout, what, last)
	default:
		return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
	}
}
