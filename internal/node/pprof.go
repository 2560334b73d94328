package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// debugServer serves Go's profiling endpoints (net/http/pprof) on a
// listener of its own, never on the KV port, so that exposing profiles is a
// separate, explicit choice of address (usually loopback).
//
//	go tool pprof -seconds 20 http://ADDR/debug/pprof/profile
//	go tool pprof http://ADDR/debug/pprof/heap
type debugServer struct {
	lis net.Listener
	srv *http.Server
}

// startDebug listens on addr and serves /debug/pprof/ there.
func startDebug(addr string) (*debugServer, error) {
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
