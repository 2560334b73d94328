package node

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/auth"
)

// AuditFile is a storage node's audit log, under its root: one JSON line
// (auth.AuditEntry) per admin command a client sent to this node, with who
// sent it, from where, what it was (secrets masked) and how it ended. It
// is synced before the command's answer goes back, and rotated at
// auditMaxBytes (auditKeep old files: audit.log.1 ...).
const (
	AuditFile     = "audit.log"
	auditMaxBytes = 64 << 20
	auditKeep     = 4
)

// auditCommand records an admin command and its outcome. A failure to
// write the audit log is logged, not returned: the command already ran.
func (n *SN) auditCommand(ctx context.Context, req *cairnpb.AdminRequest, err error) {
	e := auth.AuditEntry{Time: time.Now().UTC(), What: auth.AdminWhat(req.GetCommand(), req.GetArgs()), Outcome: "ok"}
	if id := n.id(); id != 0 {
		e.Node = fmt.Sprintf("sn%d", id)
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		e.From = p.Addr.String()
	}
	if c, ok := auth.ClaimsFrom(ctx); ok {
		e.User = c.User
	}
	if err != nil {
		st := status.Convert(err)
		e.Outcome = fmt.Sprintf("error: %v: %s", st.Code(), st.Message())
	}
	if werr := n.audit.Append(e.Line()); werr != nil {
		n.log.Error("audit log: the record of an admin command was not written", "err", werr, "what", e.What)
	}
}
