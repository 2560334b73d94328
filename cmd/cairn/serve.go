package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
)

// newLogger returns a text logger on stderr at the named level; a bad
// level is a usage error.
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// server is a running node process.
type server interface {
	Done() <-chan error
	Close() error
}

// serveUntilStopped waits for ctx (a signal) or the server to stop on its
// own, then closes it cleanly.
func serveUntilStopped(ctx context.Context, s server, log *slog.Logger) error {
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", "signal")
	case err := <-s.Done():
		log.Error("server stopped", "err", err)
	}
	if err := s.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped cleanly")
	return nil
}
