package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/node"
	"github.com/cairndb/cairn/internal/server"
)

// sock is a test's call socket (docs/design/20261128_call_socket.md).
type sock struct {
	t  *testing.T
	c  net.Conn
	r  *bufio.Reader
	id uint64
}

// dialSock connects to addr (with TLS and ALPN cairn-calls/1 when tc is
// set) and exchanges prefaces.
func dialSock(t *testing.T, addr string, tc *tls.Config) *sock {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tc != nil {
		tc = tc.Clone()
		tc.NextProtos = []string{server.ALPN}
		tc.ServerName, _, _ = net.SplitHostPort(addr)
		c = tls.Client(c, tc)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	s := &sock{t: t, c: c, r: bufio.NewReader(c)}
	s.write([]byte(server.Preface))
	pre := make([]byte, len(server.Preface))
	if _, err := io.ReadFull(s.r, pre); err != nil || string(pre) != server.Preface {
		t.Fatalf("the node's preface: %q, %v", pre, err)
	}
	return s
}

func (s *sock) write(b []byte) {
	s.t.Helper()
	if _, err := s.c.Write(b); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// frame is m framed by its length.
func frame(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// send sends calls in one frame, numbering them, and returns their ids.
func (s *sock) send(calls ...*cairnpb.StreamCall) []uint64 {
	s.t.Helper()
	var ids []uint64
	for _, c := range calls {
		s.id++
		c.Id = s.id
		ids = append(ids, s.id)
	}
	s.write(frame(&cairnpb.CallsRequest{Calls: calls}))
	return ids
}

// answers reads frames until it has n answers; an end frame (id 0) fails
// the test unless end is set, and then it ends the read.
func (s *sock) answers(n int) map[uint64]*cairnpb.StreamAnswer {
	s.t.Helper()
	got := map[uint64]*cairnpb.StreamAnswer{}
	for len(got) < n {
		var hdr [4]byte
		if _, err := io.ReadFull(s.r, hdr[:]); err != nil {
			s.t.Fatalf("reading answers (%d of %d): %v", len(got), n, err)
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(s.r, b); err != nil {
			s.t.Fatal(err)
		}
		var r cairnpb.CallsResponse
		if err := proto.Unmarshal(b, &r); err != nil {
			s.t.Fatal(err)
		}
		for _, a := range r.GetAnswers() {
			got[a.GetId()] = a
		}
	}
	return got
}

// end reads the end frame and then the connection's close.
func (s *sock) end() error {
	s.t.Helper()
	a := s.answers(1)[0]
	if a == nil {
		s.t.Fatalf("an answer instead of the end frame")
	}
	if _, err := s.r.ReadByte(); err != io.EOF {
		s.t.Errorf("after the end frame: %v, want the connection closed", err)
	}
	return answerErr(a)
}

// call sends c and returns its answer's error (nil: a response).
func (s *sock) call(c *cairnpb.StreamCall) (*cairnpb.StreamAnswer, error) {
	s.t.Helper()
	id := s.send(c)[0]
	a := s.answers(1)[id]
	if a == nil {
		s.t.Fatalf("no answer to call %d", id)
	}
	return a, answerErr(a)
}

func answerErr(a *cairnpb.StreamAnswer) error {
	if a.GetCode() == 0 {
		return nil
	}
	return status.ErrorProto(&spb.Status{Code: int32(a.GetCode()), Message: a.GetMessage(), Details: a.GetDetails()})
}

func sockPut(k *cairnpb.Key, v string, tok string) *cairnpb.StreamCall {
	return &cairnpb.StreamCall{Token: tok, Op: &cairnpb.StreamCall_Put{Put: &cairnpb.PutRequest{Op: &cairnpb.PutOp{Key: k, Value: []byte(v)}}}}
}

func sockGet(k *cairnpb.Key, tok string) *cairnpb.StreamCall {
	return &cairnpb.StreamCall{Token: tok, Op: &cairnpb.StreamCall_Get{Get: &cairnpb.GetRequest{Key: k}}}
}

// TestCallSocket is the call socket on a real `cairn lite`: calls in one
// frame or many are answered as their unary RPCs would be, each by its id;
// an oversized or malformed frame ends the connection with INVALID_ARGUMENT
// after the calls it took; the node's shutdown ends an open one with
// UNAVAILABLE, kind shutting_down; and gRPC and HTTP still work on the
// same port.
func TestCallSocket(t *testing.T) {
	t.Parallel()
	l := startLite(t, filepath.Join(t.TempDir(), "lite"))
	s := dialSock(t, l.addr, nil)

	var calls []*cairnpb.StreamCall
	for i := range 20 {
		calls = append(calls, sockPut(key([]string{"m"}, strconv.Itoa(i)), "v"+strconv.Itoa(i), ""))
	}
	ids := s.send(calls...)
	got := s.answers(len(ids))
	for _, id := range ids {
		if err := answerErr(got[id]); err != nil || got[id].GetPut().GetResult().GetNewVersion() == nil {
			t.Fatalf("put %d: %v, %v", id, got[id], err)
		}
	}
	mg := &cairnpb.StreamCall{Op: &cairnpb.StreamCall_MultiGet{MultiGet: &cairnpb.MultiGetRequest{Parent: key([]string{"m"})}}}
	a, err := s.call(mg)
	if err != nil || len(a.GetMultiGet().GetRecords()) != 20 {
		t.Fatalf("multi-get of 20 records: %d records, %v", len(a.GetMultiGet().GetRecords()), err)
	}
	_, err = s.call(sockGet(&cairnpb.Key{}, ""))
	wantRefusal(t, "a get of an empty key", err, codes.InvalidArgument, "invalid_key")

	// The same port still serves gRPC.
	if _, err := dial(t, l.addr).Get(context.Background(), &cairnpb.GetRequest{Key: key([]string{"m"}, "3")}); err != nil {
		t.Fatalf("gRPC beside the call socket: %v", err)
	}

	// A length over the limit, then bytes that are not a CallsRequest.
	big := dialSock(t, l.addr, nil)
	big.write(binary.BigEndian.AppendUint32(nil, server.MaxFrame+1))
	wantRefusal(t, "an oversized frame", big.end(), codes.InvalidArgument, "invalid_argument")
	bad := dialSock(t, l.addr, nil)
	bad.write(append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff))
	wantRefusal(t, "a malformed frame", bad.end(), codes.InvalidArgument, "invalid_argument")

	// Shutdown ends the open socket with a status that says its calls never ran.
	if code := l.stop(); code != 0 {
		t.Fatalf("lite exited %d", code)
	}
	err = s.end()
	if st, d := errorDetail(err); st.Code() != codes.Unavailable || d.GetKind() != "shutting_down" {
		t.Fatalf("the end frame at shutdown: %v (kind %q), want UNAVAILABLE shutting_down", err, d.GetKind())
	}
}

// TestSecureCallSocket is the call socket on a real `cairn lite --secure`:
// a plaintext preface is answered with an end frame naming TLS; over TLS
// (ALPN cairn-calls/1, the store CA) each call is checked with the
// socket's token and the role its op needs, as on the gRPC stream.
func TestSecureCallSocket(t *testing.T) {
	t.Parallel()
	l, dir := secureLiteWithUsers(t)
	plain := dialSock(t, l.addr, nil)
	err := plain.end()
	if st, d := errorDetail(err); st.Code() != codes.Unavailable || d.GetKind() != "tls_required" || st.Message() != node.SecureModeMessage {
		t.Fatalf("a plaintext call socket on a secure node: %v (kind %q)", err, d.GetKind())
	}

	conn := tlsConn(t, l.addr, dir, "")
	reader, writer := login(t, conn, dir, "reader"), login(t, conn, dir, "writer")
	tc, err := auth.ClientTLS(filepath.Join(dir, auth.CAFile), "")
	if err != nil {
		t.Fatal(err)
	}
	s := dialSock(t, l.addr, tc)
	k := key([]string{"s"}, "k")
	_, err = s.call(sockGet(k, ""))
	wantRefusal(t, "a first call without a token", err, codes.Unauthenticated, auth.KindLoginRequired)
	if _, err := s.call(sockGet(k, reader)); err != nil {
		t.Fatalf("a reader's get: %v", err)
	}
	_, err = s.call(sockPut(k, "v", ""))
	wantRefusal(t, "a reader's put (the socket keeps the reader's token)", err, codes.PermissionDenied, auth.KindPermissionDenied)
	if _, err := s.call(sockPut(k, "v", writer)); err != nil {
		t.Fatalf("a writer's put, its token given on the call: %v", err)
	}
	if _, err := s.call(sockPut(k, "w", "")); err != nil {
		t.Fatalf("a put that keeps the writer's token: %v", err)
	}
}

// TestCallSocketOffWithNoHTTP: a node run with --no-http serves gRPC alone,
// plaintext or secure, so a call socket gets no preface back (the client
// then calls on gRPC), and gRPC still answers.
func TestCallSocketOffWithNoHTTP(t *testing.T) {
	t.Parallel()
	for _, secure := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "lite")
		extra := []string{"--no-http"}
		if secure {
			extra = append(extra, "--secure")
		}
		l := startLiteOpts(t, root, liteOpts{extra: extra})
		c, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if secure {
			tc, err := auth.ClientTLS(filepath.Join(root, "security", auth.CAFile), "")
			if err != nil {
				t.Fatal(err)
			}
			tc.NextProtos = []string{server.ALPN}
			tc.ServerName, _, _ = net.SplitHostPort(l.addr)
			c = tls.Client(c, tc)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.WriteString(c, server.Preface)
		got := make([]byte, len(server.Preface))
		n, _ := io.ReadFull(c, got)
		c.Close()
		if string(got[:n]) == server.Preface {
			t.Errorf("secure=%v: a --no-http node answered the call socket's preface", secure)
		}
		if !secure {
			if _, err := dial(t, l.addr).Get(context.Background(), &cairnpb.GetRequest{Key: key([]string{"m"})}); err != nil {
				t.Errorf("gRPC on a --no-http node: %v", err)
			}
		}
		goClientPutGet(t, l.addr, root, secure)
	}
}

// goClientPutGet puts and gets a record with the Go client (logged in with
// root's login file when secure). The client calls on the call socket by
// default; on a --no-http node, which has none (a preface in another
// protocol, or TLS closing after the handshake), it calls on gRPC instead,
// with no error.
func goClientPutGet(t *testing.T, addr, root string, secure bool) {
	t.Helper()
	cfg := client.Config{Hosts: []string{addr}, Store: "kvstore", Timeout: 10 * time.Second}
	if secure {
		lg, err := auth.ReadLogin(filepath.Join(root, "security", auth.LoginFile))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.TLS, err = lg.TLS(); err != nil {
			t.Fatal(err)
		}
		cfg.User = lg.User
		if cfg.Password, err = lg.Password(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("secure=%v: the Go client on %s: %v", secure, addr, err)
	}
	defer c.Close()
	k := client.Key{Major: []string{"nohttp"}, Minor: []string{"k"}}
	for i := range 3 {
		if _, err := c.Put(ctx, k, []byte("v")); err != nil {
			t.Fatalf("secure=%v: put %d on %s: %v", secure, i, addr, err)
		}
	}
	if r, found, err := c.Get(ctx, k); err != nil || !found || string(r.Value) != "v" {
		t.Fatalf("secure=%v: get on %s: %v, %v, %v", secure, addr, r, found, err)
	}
}

// TestGoClientSecureCallSocket: on a real `cairn lite --secure`, the Go
// client logged in with the login file calls on the call socket (TLS, ALPN
// cairn-calls/1, the session's token on the link), not on the gRPC stream:
// the node counts the sockets it accepted.
func TestGoClientSecureCallSocket(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "lite")
	pprof := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	l := startLiteOpts(t, root, liteOpts{extra: []string{"--secure", "--pprof", pprof}})
	sockets := func() float64 {
		t.Helper()
		resp, err := http.Get("http://" + pprof + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "cairn_call_sockets_total "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		t.Fatal("no cairn_call_sockets_total in /metrics")
		return 0
	}
	before := sockets()
	goClientPutGet(t, l.addr, root, true) // a put and a get, logged in: on the socket here
	if got := sockets() - before; got < 1 {
		t.Fatalf("the secure Go client's calls opened %v call sockets, want at least 1", got)
	}
}
