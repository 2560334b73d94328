package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/grpcconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Client sends admin commands to storage nodes. It tries its addresses in
// order and moves to the next when a node cannot be reached, so a shell
// given several helper hosts survives the loss of one. CallAt sends to one
// node, which need not be among them. Safe for concurrent use.
type Client struct {
	addrs []string
	conns []*grpc.ClientConn
	// others holds CallAt's connections to addresses not in addrs, made
	// with Dial's options.
	others grpcconn.Cache
}

// ErrUnreachable is returned (wrapped) when no address answered.
var ErrUnreachable = errors.New("admin: no storage node answered")

// Dial prepares connections to addrs (host:port). It does not wait for
// them; the first Call does.
func Dial(addrs []string, opts ...grpc.DialOption) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("admin: give at least one host:port of a storage node")
	}
	c := &Client{addrs: addrs}
	c.others.Extra = opts
	for _, a := range addrs {
		cc, err := grpcconn.New(a, opts...)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("admin: %s: %w", a, err)
		}
		c.conns = append(c.conns, cc)
	}
	return c, nil
}

// Close closes the connections, CallAt's too.
func (c *Client) Close() {
	for _, cc := range c.conns {
		_ = cc.Close()
	}
	_ = c.others.Close()
}

// Addrs returns the addresses Dial was given, in the order Call tries them.
func (c *Client) Addrs() []string {
	return slices.Clone(c.addrs)
}

// Call runs command with args on the first node that answers. Errors from
// the admin keep their gRPC status; see Message.
func (c *Client) Call(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	var tried []string
	var adminErr error // an admin's own UNAVAILABLE (no leader yet), not a dead node
	for i, cc := range c.conns {
		r, err := callOne(ctx, cc, c.addrs[i], command, args)
		if err == nil {
			return r, nil
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return nil, err
		}
		if adminUnavailable(err) {
			adminErr = err
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", c.addrs[i], status.Convert(err).Message()))
	}
	if adminErr != nil {
		return nil, adminErr
	}
	return nil, unreachable(tried)
}

// CallAt runs command with args on the node at addr only: one of Addrs, or
// another (an admin that show admins names), reached with Dial's options
// over a connection kept until Close. Its errors are Call's with addr the
// only address: ErrUnreachable (wrapped) when the node cannot be reached.
func (c *Client) CallAt(ctx context.Context, addr, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	cc, err := c.connTo(addr)
	if err != nil {
		return nil, unreachable([]string{fmt.Sprintf("%s (%v)", addr, err)})
	}
	r, err := callOne(ctx, cc, addr, command, args)
	if status.Code(err) == codes.Unavailable && ctx.Err() == nil && !adminUnavailable(err) {
		return nil, unreachable([]string{fmt.Sprintf("%s (%s)", addr, status.Convert(err).Message())})
	}
	return r, err
}

// connTo returns the connection to addr: Dial's, or one of c.others.
func (c *Client) connTo(addr string) (*grpc.ClientConn, error) {
	if i := slices.Index(c.addrs, addr); i >= 0 {
		return c.conns[i], nil
	}
	return c.others.Get(addr)
}

// callOne sends command to the node at addr over cc, within callTimeout.
// A node without the admin service gets a sentence, not gRPC's "unknown
// service".
func callOne(ctx context.Context, cc *grpc.ClientConn, addr, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	actx, cancel := context.WithTimeout(ctx, callTimeout(command))
	defer cancel()
	r, err := cairnpb.NewAdminClient(cc).Command(actx, &cairnpb.AdminRequest{Command: command, Args: args}, grpc.WaitForReady(false))
	if status.Code(err) == codes.Unimplemented {
		return nil, status.Errorf(codes.Unimplemented, "%s serves no admin service: it is not a storage node started with cairn sn start (cairn lite has no admin; see docs/operations.md to deploy a store)", addr)
	}
	return r, err
}

// adminUnavailable reports whether err is an admin's own UNAVAILABLE (no
// leader yet, leadership moving): the node answered.
func adminUnavailable(err error) bool {
	return status.Code(err) == codes.Unavailable && strings.HasPrefix(status.Convert(err).Message(), "admin:")
}

// unreachable is ErrUnreachable naming the nodes tried ("addr (why)").
func unreachable(tried []string) error {
	return fmt.Errorf("%w: tried %s. Is `cairn sn start` running there, and are host and port right?", ErrUnreachable, strings.Join(tried, "; "))
}

func callTimeout(command string) time.Duration {
	if command == "plan wait" {
		return 10 * time.Minute
	}
	return 2 * time.Minute
}

// Message returns the human text of an error from Call: the admin's own
// message for a gRPC status, the error text otherwise.
func Message(err error) string {
	if s, ok := status.FromError(err); ok {
		return s.Message()
	}
	return err.Error()
}

// Login logs in to a secure store through the first node that answers and
// returns the session token, which Session then sends with every command.
func (c *Client) Login(ctx context.Context, user, password string) (string, error) {
	var last error
	for _, cc := range c.conns {
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := cairnpb.NewAuthClient(cc).Login(lctx, &cairnpb.LoginRequest{User: user, Password: password})
		cancel()
		if err == nil {
			return r.GetToken(), nil
		}
		last = err
		if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
			break
		}
	}
	return "", last
}

// Session is a login's token as per-call credentials (set Token after
// Login; until then calls carry none). Safe for concurrent use.
type Session struct {
	mu    sync.Mutex
	token string
}

// SetToken sets the token calls carry.
func (s *Session) SetToken(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = t
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (s *Session) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == "" {
		return nil, nil
	}
	return map[string]string{"authorization": "Bearer " + s.token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (s *Session) RequireTransportSecurity() bool { return true }
