package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/cairndb/cairn/internal/metrics"
)

// debugServer serves Go's profiling endpoints (net/http/pprof) and the
// node's Prometheus metrics (/metrics, internal/metrics) on a listener of
// its own, never on the KV port, so that exposing them is a separate,
// explicit choice of address (usually loopback).
//
//	go tool pprof -seconds 20 http://ADDR/debug/pprof/profile
//	go tool pprof http://ADDR/debug/pprof/heap
//	curl http://ADDR/metrics
type debugServer struct {
	lis net.Listener
	srv *http.Server
}

// startDebug listens on addr and serves /debug/pprof/ and /metrics there.
func startDebug(addr string, snap func() metrics.Snapshot) (*debugServer, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("GET /metrics", metrics.Handler(snap))
	d := &debugServer{lis: lis, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = d.srv.Serve(lis) }()
	return d, nil
}

// Addr returns the host:port the endpoint listens on.
func (d *debugServer) Addr() string { return d.lis.Addr().String() }

// close stops the endpoint; a profile being taken is cut short.
func (d *debugServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := d.srv.Shutdown(ctx); err != nil {
		_ = d.srv.Close() // a profile still running: end it
	}
}
