package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Run loads cfg's models and serves them on cfg.Addr until ctx ends or
// the process gets SIGINT or SIGTERM (see Serve).
func Run(ctx context.Context, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		s.Close()
		return err
	}
	return s.Serve(ctx, ln)
}

// Serve answers the API on ln until ctx ends or the process gets SIGINT or
// SIGTERM, then shuts down gracefully: /healthz and new requests answer
// 503, the listener closes, requests in flight finish (for up to
// ShutdownGrace) and the models' batchers stop. SIGHUP reloads the models
// (Reload). It returns nil after a graceful shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: s.cfg.Timeout,
		WriteTimeout: s.cfg.Timeout + 10*time.Second, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(s.log, "serving %s on http://%s (SIGHUP or POST /v1/reload reloads; SIGINT or SIGTERM stops)\n", strings.Join(s.names(), ", "), ln.Addr())
	if s.cfg.OnListen != nil {
		s.cfg.OnListen(ln.Addr())
	}
	for {
		select {
		case <-hup:
			fmt.Fprintln(s.log, "SIGHUP: reloading the models")
			go s.Reload() // logs its outcome; the old models serve meanwhile
		case err := <-errc:
			s.Close()
			return err
		case <-ctx.Done():
			grace := s.cfg.shutdownGrace()
			fmt.Fprintf(s.log, "shutting down: finishing the requests in flight (up to %s)\n", grace)
			s.Drain()
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			err := srv.Shutdown(sctx)
			cancel()
			s.Close()
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("shutdown: requests still in flight after %s were cut: %w", grace, err)
			}
			fmt.Fprintln(s.log, "stopped")
			return nil
		}
	}
}
