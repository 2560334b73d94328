// Package client is the Go client of a Cairn store.
//
// A Client holds a pool of gRPC connections to one or more nodes of one store
// and turns calls into the wire requests of package cairnpb (api/cairnpb/
// kv.proto). It is safe for concurrent use by any number of goroutines;
// iterators belong to the goroutine that ranges over them.
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
// in the request header.
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
// The client does not check key and value sizes; the server does and returns
// ErrLimitExceeded naming the limit.
package client
