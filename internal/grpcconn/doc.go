// Package grpcconn makes the gRPC client connections that Cairn's tools and
// nodes keep to storage nodes, with one bounded reconnect policy.
//
// gRPC's default reconnect back-off grows by 1.6x per failed attempt up to
// 120 s. A connection kept across a node's outage (the Go client's pools,
// the admin's cached connections, the admin shell, cairn cluster's prober)
// would then wait up to two minutes after the node is back before trying
// again. Policy caps the wait at MaxBackoff, so such a connection reaches a
// restarted node within about a second. (internal/transport's Raft peers
// dial a fresh connection per reconnect and run their own back-off; they do
// not use this package.)
//
// Every connection, and every node's gRPC server (ServerWindows), uses
// static HTTP/2 flow-control windows (window.go), which turn off gRPC's
// bandwidth-delay pings; internal/transport's dials take DialWindows too.
//
// New dials one connection with the policy; Cache keeps one per address
// until Close, and may route an address to another (Cache.Route: a node's
// --peer overrides, so that a fault test's proxies carry its calls). Both
// are safe for concurrent use.
//
//	cc, err := grpcconn.New("127.0.0.1:5000")
//	if err != nil {
//		return err // only a malformed target fails here
//	}
//	defer cc.Close()
//	kv := cairnpb.NewKVClient(cc)
package grpcconn
