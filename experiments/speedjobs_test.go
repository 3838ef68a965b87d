package experiments

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/textarmor/textarmor/pipeline"
)

// TestJobConfigErrors checks that the speed and demo jobs refuse bad
// settings with a *pipeline.ConfigError naming the CLI flag.
func TestJobConfigErrors(t *testing.T) {
	ctx := context.Background()
	for i, c := range []struct {
		err  error
		want string
	}{
		{func() error { c := NewDefenseSpeedConfig(); c.LR = 0; _, err := RunDefenseSpeed(ctx, c); return err }(), "--lr 0 must be a positive number"},
		{func() error {
			c := NewDefenseSpeedConfig()
			c.Defenses = []string{"flat"}
			_, err := RunDefenseSpeed(ctx, c)
			return err
		}(), "--defenses: flat trains in attack rounds"},
		{func() error {
			c := NewDefenseSpeedConfig()
			c.Defenses = []string{" ", ""}
			_, err := RunDefenseSpeed(ctx, c)
			return err
		}(), "--defenses is empty"},
		{func() error { c := NewSpeedConfig(); c.MinTime = 0; _, err := RunSpeed(ctx, c); return err }(), "--time 0s must be a positive duration"},
		{func() error { c := NewSpeedConfig(); c.BLAS = "nope"; _, err := RunSpeed(ctx, c); return err }(), `"nope"`},
		{func() error { c := NewSpeedConfig(); c.Len = 1; _, err := RunSpeedTransformer(ctx, c); return err }(), "--time 3s must be positive and --len 1 in [2, 512]"},
		{func() error { c := NewDemoConfig(); c.Epochs = 0; _, err := RunDemo(ctx, c); return err }(), "--epochs 0 must be at least 1"},
	} {
		var ce *pipeline.ConfigError
		if !errors.As(c.err, &ce) || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("case %d: got %v, want a configuration error with %q", i, c.err, c.want)
		}
	}
}

func TestJobsStopWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := NewSpeedConfig()
	c.MinTime = time.Nanosecond
	if _, err := RunSpeed(ctx, c); !errors.Is(err, context.Canceled) {
		t.Errorf("RunSpeed on a cancelled context: %v", err)
	}
}
