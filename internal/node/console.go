package node

import (
	"context"
	"fmt"
	"net/http"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/console"
)

// The web console (internal/console) shares the port's HTTP server with
// the HTTP/JSON API: its paths (/console...) go to it, the rest to the API.
//
//	HTTP/1.x ──► withConsole ──┬── /console, /console/... ─► console.Handler (sn) or console.NotServed (lite)
//	                           └── anything else ──────────► httpapi (the KV API)

// withConsole serves console's paths with c and the others with api; nil
// when api is nil (--no-http: no HTTP at all).
func withConsole(api, c http.Handler) http.Handler {
	if api == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if console.Owns(r.URL.Path) {
			c.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// adminMethod is the RPC a console request stands for, for the guard's
// first check of its caller; each command's own role is checked after.
const adminMethod = "/cairn.v1.Admin/Command"

// consoleHandler is a storage node's console: its commands run as the
// admin RPC runs a shell's, and on a secure node its callers log in.
func (n *SN) consoleHandler() http.Handler {
	var gate console.Gate
	if n.sec != nil {
		tokens := &auth.BasicTokens{}
		gate = func(r *http.Request) (context.Context, error) {
			return n.sec.guard.HTTPCaller(r, tokens, adminMethod)
		}
	}
	return console.New(snConsole{n: n}, gate)
}

// snConsole runs the console's commands on a storage node.
type snConsole struct{ n *SN }

// Command checks the caller's role for command as the admin RPC does and
// runs it there, without the audit line (console's doc.go says why).
func (s snConsole) Command(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	if err := s.n.checkAdminCaller(ctx, command, false); err != nil {
		return nil, err
	}
	return adminRPC{n: s.n}.command(ctx, &cairnpb.AdminRequest{Command: command, Args: args})
}

func (s snConsole) Self() string {
	if id := s.n.id(); id != 0 {
		return fmt.Sprintf("sn%d (%s)", id, s.n.Addr())
	}
	return "this node (" + s.n.Addr() + ")"
}

// liteConsole answers a lite node's console paths.
var liteConsole = console.NotServed("cairn lite has no admin service, so it serves no web console; " +
	"a store of storage nodes (cairn sn) serves one at /console on each node's port")
