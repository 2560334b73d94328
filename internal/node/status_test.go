package node

import "google.golang.org/grpc/status"

func statusOf(err error) (*status.Status, bool) { return status.FromError(err) }
