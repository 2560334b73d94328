package admin

import (
	"context"
	"errors"
	"fmt"
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
// given several helper hosts survives the loss of one. Safe for concurrent
// use.
type Client struct {
	addrs []string
	conns []*grpc.ClientConn
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

// Close closes the connections.
func (c *Client) Close() {
	for _, cc := range c.conns {
		_ = cc.Close()
	}
}

// Call runs command with args on the first node that answers. Errors from
// the admin keep their gRPC status; see Message.
func (c *Client) Call(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	var tried []string
	var adminErr error // an admin's own UNAVAILABLE (no leader yet), not a dead node
	for i, cc := range c.conns {
		actx, cancel := context.WithTimeout(ctx, callTimeout(command))
		r, err := cairnpb.NewAdminClient(cc).Command(actx, &cairnpb.AdminRequest{Command: command, Args: args}, grpc.WaitForReady(false))
		cancel()
		if err == nil {
			return r, nil
		}
		if status.Code(err) == codes.Unimplemented {
			return nil, status.Errorf(codes.Unimplemented, "%s serves no admin service: it is not a storage node started with cairn sn start (cairn lite has no admin; see docs/operations.md to deploy a store)", c.addrs[i])
		}
		if status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return nil, err
		}
		if strings.HasPrefix(status.Convert(err).Message(), "admin:") {
			adminErr = err
		}
		tried = append(tried, fmt.Sprintf("%s (%s)", c.addrs[i], status.Convert(err).Message()))
	}
	if adminErr != nil {
		return nil, adminErr
	}
	return nil, fmt.Errorf("%w: tried %s. Is `cairn sn start` running there, and are host and port right?", ErrUnreachable, strings.Join(tried, "; "))
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
