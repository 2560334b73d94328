// Package client is the Go client of a Cairn store.
//
// A Client holds a pool of gRPC connections to one or more nodes of one store
// and turns calls into the wire requests of package cairnpb (api/cairnpb/
// kv.proto). It is safe for concurrent use by any number of goroutines;
// iterators belong to the goroutine that ranges over them.
//
// The same client serves cairn lite (one shard, everything on one host) and
// a replicated store: Open asks a host for StoreInfo, and an answer that
// carries a topology makes the client route requests itself (see Routing).
//
//	c, err := client.Open(ctx, client.Config{Hosts: []string{"127.0.0.1:5000"}, Store: "kvstore"})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	k := client.MustParseKey("/users/alice/-/email")
//	if _, err := c.Put(ctx, k, []byte("alice@example.com"), client.WithTTL(24*time.Hour)); err != nil {
//		return err
//	}
//	rec, found, err := c.Get(ctx, k, client.WithConsistency(client.Absolute))
//	for rec, err := range c.MultiGetIterator(ctx, client.Forward, 100, client.MustParseKey("/users/alice"), nil, 0) {
//		...
//	}
//
// # Keys and atomicity
//
// A Key is a major path and a minor path. Records with the same major path
// live in one partition: MultiGet, MultiDelete and Execute work within one
// major path and are atomic there. StoreIterator spans partitions and is not
// a snapshot.
//
// # Defaults
//
// The zero value of every enum (Depth, Direction, ReturnValueVersion) means
// the server's default and is sent as the *_UNSPECIFIED wire value: depth
// ParentAndDescendants, direction Forward, return nothing. A zero Durability
// field or zero Consistency means the Config's default instead. Options
// apply left to right over the Config.
//
// # Deadlines
//
// Every operation (every page, for an iterator) runs under the earlier of
// the context's deadline and now+Timeout, and tells the server the time left
// in the request header, only there: the RPC's own context carries no gRPC
// deadline (so no grpc-timeout header, and no server timer per request),
// yet it ends at the deadline, when gRPC resets the stream (callctx.go).
//
// # Errors and retries
//
// Operations return *Error: the gRPC code plus the server's ErrorDetail
// (kind, action, limit sizes, maybe_applied). Use errors.Is with the Err*
// sentinels, or errors.As for the fields. A condition that does not hold is
// not an error: the Result has Done false. Execute returns *ExecutionError
// when an AbortIfUnsuccessful op was not done.
//
// The client retries, with capped exponential backoff until the deadline:
//   - reads, on Unavailable or an error whose action is RETRY or REFRESH;
//   - writes, only on RETRY or REFRESH and only when the write was certainly
//     not applied. A connection that failed before the request was handed
//     to it counts as not applied; a failure after that, with no answer from
//     the server, is returned with MaybeApplied set and is never retried.
//
// On a replicated store the client also moves between replicas (see
// Routing): a "not_leader" or "dropped" answer, or a node that cannot be
// reached before the request was sent, means the write was not applied, so
// it is retried at the right node within the operation's deadline. An
// "outcome_unknown" or "ack_timeout" answer, like a connection lost after
// sending, is returned with MaybeApplied set and matches ErrOutcomeUnknown;
// such a write is never retried, so no write is applied twice by the client.
//
// # Routing
//
// For a replicated store the client caches the topology from StoreInfo: its
// nodes, its shards (Raft groups of replicas on distinct nodes) and which
// shard owns each partition. A request about a key goes to the shard owning
// the partition of the key's major path:
//
//   - writes and Absolute reads go to the shard's leader. The client caches
//     each shard's leader (first from the answering node's view, else the
//     shard's preferred node), follows a not_leader answer's hint at once,
//     and when no leader is known (an election) tries the other replicas,
//     pausing between rounds;
//   - NoneRequired, TimeLag and AtVersion reads go to the client's home
//     replica of the shard: the first in the client's own random ranking of
//     the nodes (rendezvous hashing, home.go), so that clients spread over
//     the nodes while each sends its reads of a shard to one, over warm
//     connections, and sees that replica's state only move forward. When
//     the home fails the next ranked replica serves. Config.SpreadReads
//     sends them round robin instead. A multi-page read stays on one
//     replica;
//   - a "rejoining" answer (the replica rebuilds from its peers after its
//     node lost or set aside its data) sends the request to another replica
//     at once; the node itself stays usable for its other shards;
//   - a node that cannot be reached is passed over for about a second
//     (failPeriod) while other replicas can serve. Connecting to a node
//     waits at most Config.ConnectTimeout, and an attempt of a NoneRequired
//     or Absolute read (or StoreInfo) at most a third of the time left, so
//     a node whose host is down, or that hangs with its connection open,
//     costs that much before another replica is tried. TimeLag and
//     AtVersion attempts may wait the whole time left, as the replica may
//     be catching up; a write sent to a node that hangs can only end
//     MaybeApplied;
//   - a "wrong_shard" answer, or a not_leader hint naming a node the client
//     does not know, makes it fetch the topology again from any node, then
//     retry. StoreInfo also adopts a newer topology;
//   - StoreIterator reads the shards one after another, each from one
//     replica (the leader, for Absolute) with its own resume token.
//
// Connections to a node are made when a request first needs it, Config.Conns
// per node.
//
// Calls (gets, multi-gets and writes; not StoreScan and StoreInfo) travel on
// one long-lived call stream per connection (cairn.v1.KVStream,
// callstream.go), each tagged with an id and answered as the unary call
// would answer it. A call whose stream breaks fails as UNAVAILABLE: a read
// is retried, and a write that was sent is reported as maybe applied,
// exactly as when a unary call's connection breaks, unless the node said,
// closing the stream at shutdown, that it never ran the call (then it is
// retried). With a login, the stream's first call carries the session
// token, and so does the first call after each renewal: the node checks
// every call with the stream's latest token, as it checks a unary call's.
// A server without the stream (an older server) makes the connection call
// unary; so does Config.UnaryCalls.
//
// Before the stream, a call tries the node's call socket (callsocket.go,
// callpipe.go, docs/design/20261128_call_socket.md and
// docs/design/20261129_pipelined_call_socket.md): the same calls and
// answers framed by a length on a bare connection (TLS with ALPN
// cairn-calls/1 on a secure store), up to four per node. A call takes a
// link with nothing in flight; when all four are busy, it shares one of
// the first two. On a shared link, the calls that queue while one is
// written go in the next write together, and one waiting caller at a time
// reads the answers and hands each to its caller: a lone caller writes and
// reads its own call, and many callers share each system call. The rules above
// hold on it too: a caller that gives up leaves the link to the others (a
// cancelled call may still run), a write sent on a link that breaks is
// maybe applied, one not yet sent is made again on a new link, and an end
// frame's status says whether the calls ran. A link that read nothing for
// 100 ms, and nothing since a call that reached its deadline left, is
// closed: its node is gone or cut off. A link that lay idle for over a
// millisecond is checked before a call is written on it, so a node that
// was killed while the client was quiet costs a new link, not an unknown
// outcome. A node without the socket (one run with --no-http, or an older
// one) is called on the stream, and tried again a minute later.
// Config.NoCallSocket keeps calls on the stream.
//
// The client does not check key and value sizes; the server does and returns
// ErrLimitExceeded naming the limit.
package client
