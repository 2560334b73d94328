// Package server implements the gRPC KV service: it validates each request,
// turns writes into commands for the shard's replica, serves reads from the
// engine once the replica says the read's consistency is met, and maps every
// error to a gRPC status carrying a cairnpb.ErrorDetail that tells the client
// whether to retry, refresh, or fix its input.
//
// Validation happens here, before a command exists: a command that reaches
// the replica is well formed (storage.Apply still rejects malformed commands
// deterministically, as a second line of defence). That includes UTF-8:
// the protobuf runtime does not check strings (api/cairnpb/kv.proto sets
// utf8_validation = NONE), so every string a client sends is checked here
// (validate.go lists them) and refused with INVALID_ARGUMENT naming the
// field. Every string the server sends back is valid UTF-8: record keys were
// checked before they were written, and status messages quote client
// strings with %q.
//
// CallStream serves the same calls on a long-lived stream per client
// connection (cairn.v1.KVStream; callstream.go and
// docs/design/20261127_call_stream.md): each call is answered by the same
// method, with the status the unary call would return. ServeConn serves
// the same stream's messages on a bare connection, framed by a length (the
// call socket: callconn.go and docs/design/20261128_call_socket.md), for
// clients that call without HTTP/2; the session, its checks and its
// answers are the gRPC stream's.
//
// # Concurrency
//
// A Server is safe for concurrent use by gRPC's handler goroutines; it keeps
// no per-request state. A CallStream runs each call on one of its
// long-lived workers, or on a goroutine of its own when all are busy; one
// goroutine per stream takes the calls, and their answers are sent by
// combining: one call's goroutine at a time sends every answer queued, in
// one message. Close ends every stream once the calls it took are
// answered; a call socket then gets an end frame and is closed, and a
// call socket's client closing its connection cancels its calls in flight.
package server
