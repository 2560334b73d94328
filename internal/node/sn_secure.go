package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/auth"
	kvserver "github.com/cairndb/cairn/internal/server"
)

// snSecurity is a secure storage node's TLS and guard
// (docs/design/20261127_security.md §1, §5). Every node of a store holds
// the same CA, token key and user table (ROOT/security, copied from the
// directory `cairn security init` made) and its own certificate. Peers
// call the node-only services (Raft transport, control) with their node
// certificates; users call KV and admin commands with a login's token.
type snSecurity struct {
	server *tls.Config // the port's: TLS 1.3, client certificates verified if given
	dial   *tls.Config // to other nodes: the store CA, this node's certificate
	guard  *auth.Guard
}

// nodeOnlyServices may be called only by nodes of the store.
var nodeOnlyServices = []string{"/cairn.transport.v1.Raft/", "/cairn.control.v1.Control/"}

func (n *SN) openSecurity() (*snSecurity, error) {
	dir := SecurityDir(n.cfg.Root)
	for _, f := range []string{auth.CAFile, auth.NodeCertFile, auth.NodeKeyFile, auth.TokenKeyFile, auth.UsersFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("secure: %s is missing: make the store's security directory once with 'cairn security init', "+
				"copy its ca.pem, token.key and users.json to every node's ROOT/security, and give each node its certificate "+
				"('cairn security add-node')", filepath.Join(dir, f))
		}
	}
	server, err := auth.ServerTLS(dir)
	if err != nil {
		return nil, err
	}
	server.NextProtos = []string{"http/1.1", "h2", kvserver.ALPN}
	dial, err := auth.ClientTLS(filepath.Join(dir, auth.CAFile), dir)
	if err != nil {
		return nil, err
	}
	store, err := auth.CertStore(dir)
	if err != nil {
		return nil, err
	}
	g, err := auth.NewGuard(dir, store, 0, func(e auth.AuditEntry) {
		if id := n.id(); id != 0 {
			e.Node = fmt.Sprintf("sn%d", id)
		}
		if err := n.audit.Append(e.Line()); err != nil {
			n.log.Error("audit log: a login was not recorded", "err", err, "user", e.User, "what", e.What)
		}
	})
	if err != nil {
		return nil, err
	}
	// A node forwards admin commands to the admin leader with its
	// certificate, after its own guard checked the user.
	g.AllowNodes(nodeOnlyServices, "/cairn.v1.Admin/Command")
	return &snSecurity{server: server, dial: dial, guard: g}, nil
}

// dialTLS is the TLS configuration of connections to other nodes; nil for
// a plaintext node (s nil).
func (s *snSecurity) dialTLS() *tls.Config {
	if s == nil {
		return nil
	}
	return s.dial
}

// dialOptions are grpc dial options for connections to other nodes.
func (s *snSecurity) dialOptions() []grpc.DialOption {
	if s == nil {
		return nil
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(s.dial))}
}

// InstallUsers writes the admin's user table into the node's security
// directory; the guard reads it within a second.
func (c controlRPC) InstallUsers(_ context.Context, r *controlpb.InstallUsersRequest) (*controlpb.NodeInfo, error) {
	n := c.n
	if n.sec == nil {
		return nil, status.Error(codes.FailedPrecondition, "this storage node is not secure (cairn sn start --secure): it has no users")
	}
	if err := n.checkStore(r.GetStore()); err != nil {
		return nil, err
	}
	if err := auth.InstallUsers(SecurityDir(n.cfg.Root), r.GetUsers()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return n.describe(), nil
}

// userCommands change the user table: sysadmin only.
var userCommands = map[string]bool{
	"plan create-user": true, "plan drop-user": true, "plan change-user": true, "plan grant": true, "plan revoke": true,
}

// adminRole is the role an admin command needs: sysadmin for the user
// commands, readonly for those that only look (show, verify, ping, topology
// preview, plan wait), dbadmin for the rest.
func adminRole(command string) auth.Role {
	switch {
	case userCommands[command]:
		return auth.RoleSysAdmin
	case strings.HasPrefix(command, "show ") || strings.HasPrefix(command, "verify ") ||
		command == "ping" || command == "topology preview" || command == "plan wait":
		return auth.RoleReadOnly
	}
	return auth.RoleDBAdmin
}

// checkAdminCaller refuses an admin command from a user without its role
// (adminRole), and a user command on a node that is not secure. A command
// forwarded by another node was checked there.
func (n *SN) checkAdminCaller(ctx context.Context, command string, forwarded bool) error {
	if forwarded {
		return nil
	}
	if n.sec == nil {
		if userCommands[command] {
			return status.Errorf(codes.FailedPrecondition, "%s: this store is not secure (cairn sn start --secure): it has no users", command)
		}
		return nil
	}
	need := adminRole(command)
	c, ok := auth.ClaimsFrom(ctx)
	if !ok || !c.Role.Covers(need) {
		return status.Errorf(codes.PermissionDenied, "user %q has role %s; %s needs role %s", c.User, c.Role, command, need)
	}
	return nil
}

// localUsers reads the node's user table, for the admin's first user
// command; nil on a node that is not secure.
func (n *SN) localUsers() func() (uint64, []auth.User, error) {
	if n.sec == nil {
		return nil
	}
	return func() (uint64, []auth.User, error) { return auth.ReadUsers(SecurityDir(n.cfg.Root)) }
}
