package grpcconn

import "google.golang.org/grpc"

// HTTP/2 flow-control windows of every Cairn connection, client and server
// side. They are static: a fixed window turns off gRPC's bandwidth-delay
// estimator, which otherwise sends a PING (and a connection WINDOW_UPDATE)
// after every round trip of a connection that carries data, and reads the
// PING's ack, until its estimate reaches 16 MiB, which small requests never
// make it reach. On a busy node that is a frame, a system call and a
// goroutine wake-up on each side for every few requests; on a 3-node
// cluster, whose Raft streams carry data one way only, dropping it cut the
// servers' CPU per operation by about a tenth (docs/benchmarks.md).
//
// StreamWindow bounds what a sender may have in flight on one stream
// before the receiver's application reads it; ConnWindow bounds it for all
// streams of a connection. 4 MiB keeps a 1 MiB snapshot chunk, or a 4 MiB
// multi-get reply, from waiting on a window update; over a link with a
// round trip of r, one stream moves at most StreamWindow/r (40 MB/s at
// 100 ms).
const (
	StreamWindow = 4 << 20
	ConnWindow   = 16 << 20
)

// DialWindows returns the dial options that set the static windows.
func DialWindows() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithStaticStreamWindowSize(StreamWindow), grpc.WithStaticConnWindowSize(ConnWindow)}
}

// ServerWindows returns the server options that set the static windows.
func ServerWindows() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.StaticStreamWindowSize(StreamWindow), grpc.StaticConnWindowSize(ConnWindow)}
}
