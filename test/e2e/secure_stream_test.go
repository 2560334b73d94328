package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/auth"
)

// TestSecureCallStream is the call stream (cairn.v1.KVStream) on a real
// `cairn lite --secure`: a stream opens only with a token, and each call
// on it is checked as its unary RPC would be, with the stream's token (the
// last one a call carried) and the role of the call's op: a reader's write
// is refused, a writer's token given by a later call lets it write, and a
// session revoked or expired while the stream stays open is refused at its
// next call.
func TestSecureCallStream(t *testing.T) {
	t.Parallel()
	l, dir := secureLiteWithUsers(t)
	conn := tlsConn(t, l.addr, dir, "")
	reader, writer := login(t, conn, dir, "reader"), login(t, conn, dir, "writer")
	k := key([]string{"s"}, "k")
	get := func(tok string) *cairnpb.StreamCall {
		return &cairnpb.StreamCall{Token: tok, Op: &cairnpb.StreamCall_Get{Get: &cairnpb.GetRequest{Key: k}}}
	}
	put := func(tok string) *cairnpb.StreamCall {
		return &cairnpb.StreamCall{Token: tok, Op: &cairnpb.StreamCall_Put{Put: &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: k, Value: []byte("v")}}}}
	}

	// Without a token the stream does not open.
	open := func(ctx context.Context) cairnpb.KVStream_CallsClient {
		t.Helper()
		st, err := cairnpb.NewKVStreamClient(conn).Calls(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bare := open(ctx)
	_ = bare.Send(&cairnpb.CallsRequest{Calls: []*cairnpb.StreamCall{get(reader)}}) // io.EOF if refused already: Recv says why
	_, err := bare.Recv()
	wantRefusal(t, "a stream opened without a token", err, codes.Unauthenticated, auth.KindLoginRequired)

	sctx, scancel := context.WithCancel(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+reader))
	defer scancel()
	st := open(sctx)
	id := uint64(0)
	call := func(c *cairnpb.StreamCall) error {
		t.Helper()
		id++
		c.Id = id
		if err := st.Send(&cairnpb.CallsRequest{Calls: []*cairnpb.StreamCall{c}}); err != nil {
			t.Fatalf("send: %v", err)
		}
		r, err := st.Recv()
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		a := r.GetAnswers()[0]
		if a.GetId() != id {
			t.Fatalf("answer %d to call %d", a.GetId(), id)
		}
		if a.GetCode() == 0 {
			return nil
		}
		return status.ErrorProto(&spb.Status{Code: int32(a.GetCode()), Message: a.GetMessage(), Details: a.GetDetails()})
	}
	// The opening's header is not a call's token: the first call needs one.
	wantRefusal(t, "a first call without a token", call(get("")), codes.Unauthenticated, auth.KindLoginRequired)
	if err := call(get(reader)); err != nil {
		t.Fatalf("a reader's get: %v", err)
	}
	wantRefusal(t, "a reader's put (the stream keeps the reader's token)", call(put("")), codes.PermissionDenied, auth.KindPermissionDenied)
	if err := call(put(writer)); err != nil {
		t.Fatalf("a writer's put, its token given on the call: %v", err)
	}
	if err := call(put("")); err != nil {
		t.Fatalf("a put that keeps the writer's token: %v", err)
	}

	// An expired token, signed with the store's own key, given on a call.
	key, err := os.ReadFile(filepath.Join(dir, auth.TokenKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	old := auth.SignToken(key, auth.Claims{User: "writer", Role: auth.RoleReadWrite, Issued: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)})
	wantRefusal(t, "a call with an expired token", call(get(old)), codes.Unauthenticated, auth.KindTokenExpired)
	if err := call(get(writer)); err != nil {
		t.Fatalf("back to the writer's token: %v", err)
	}
	// The writer's session ends when its role changes, on the same stream.
	mustCairn(t, "security", "add-user", "--dir", dir, "--name", "writer", "--role", "readonly")
	waitFor(t, 5*time.Second, "the writer's session to end on the open stream", func() bool {
		_, d := errorDetail(call(get("")))
		return d.GetKind() == auth.KindTokenRevoked
	})
}

// secureLiteWithUsers starts a real `cairn lite --secure` with two users
// besides its admin, "reader" (readonly) and "writer" (readwrite), and
// returns it and its security directory.
func secureLiteWithUsers(t *testing.T) (*lite, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "lite")
	l := startLiteOpts(t, root, liteOpts{extra: []string{"--secure"}})
	dir := filepath.Join(root, "security")
	for _, u := range [][2]string{{"reader", "readonly"}, {"writer", "readwrite"}} {
		mustCairn(t, "security", "add-user", "--dir", dir, "--name", u[0], "--role", u[1])
	}
	return l, dir
}

// login logs user in on conn with the password in dir and returns the
// session's token, waiting for the node to read a user just added.
func login(t *testing.T, conn grpc.ClientConnInterface, dir, user string) string {
	t.Helper()
	var tok string
	waitFor(t, 5*time.Second, user+"'s login (the node reads a new user within a second)", func() bool {
		r, err := cairnpb.NewAuthClient(conn).Login(context.Background(), &cairnpb.LoginRequest{User: user, Password: readPassword(t, filepath.Join(dir, user+".passwd"))})
		tok = r.GetToken()
		return err == nil
	})
	return tok
}
