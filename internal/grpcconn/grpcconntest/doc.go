// Package grpcconntest checks that a gRPC client connection reaches a
// storage node soon after the node comes back from a long outage: the test
// that every connection made with package grpcconn's policy must pass.
//
// Example, in a package that keeps connections:
//
//	func TestPoolReconnectsAfterOutage(t *testing.T) {
//		grpcconntest.CheckReconnect(t, func(addr string) *grpc.ClientConn {
//			p, _ := dialPool(addr, 1)
//			t.Cleanup(func() { p.close() })
//			return p.conns[0]
//		})
//	}
package grpcconntest
