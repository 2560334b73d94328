package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
)

// TestSecureRoles is users and roles on a real `cairn lite --secure`:
// each role against each class of operation (reads, writes), then the
// refusals the issue lists (no credentials, a wrong password, an expired
// token, a token whose user changed since), each with a clear error, while
// a reader keeps being served; the audit log records logins and failures.
func TestSecureRoles(t *testing.T) {
	t.Parallel()
	l, dir := secureLiteWithUsers(t)
	admin := filepath.Join(dir, auth.LoginFile)
	mustCairn(t, "kv", "--hosts", l.addr, "--security", admin, "put", "/m/-/k", "v0")

	// The matrix, through cairn kv: exit 0 when allowed; when denied, exit
	// >= 2 and a message naming the role needed.
	type op struct {
		class string
		args  []string
	}
	ops := []op{{"read", []string{"get", "/m/-/k"}}, {"write", []string{"put", "/m/-/k", "v1"}}}
	allowed := map[string]map[string]bool{
		"reader": {"read": true},
		"writer": {"read": true, "write": true},
		"admin":  {"read": true, "write": true},
	}
	for user, can := range allowed {
		login := filepath.Join(dir, user+".security")
		if user == "admin" {
			login = admin
		}
		for _, o := range ops {
			// Within a second of add-user the running node has read the table.
			code, _, errOut := runCairnUntil(t, 5*time.Second, func(code int, errOut string) bool {
				return !strings.Contains(errOut, "no such user") && !strings.Contains(errOut, "login failed")
			}, append([]string{"kv", "--hosts", l.addr, "--security", login}, o.args...)...)
			switch {
			case can[o.class] && code != 0:
				t.Errorf("%s %s: exit %d, %s; want it allowed", user, o.class, code, errOut)
			case !can[o.class] && (code < 2 || !strings.Contains(errOut, "needs role readwrite")):
				t.Errorf("%s %s: exit %d, %q; want it denied naming role readwrite", user, o.class, code, errOut)
			}
		}
	}

	// A reader runs through all the refusals below and is never refused.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readerErr := make(chan error, 1)
	go func() { readerErr <- keepReading(ctx, t, l.addr, dir) }()

	conn := tlsConn(t, l.addr, dir, "")
	kv := cairnpb.NewKVClient(conn)
	get := func(ctx context.Context) error {
		_, err := kv.Get(ctx, &cairnpb.GetRequest{Key: &cairnpb.Key{Major: []string{"m"}, Minor: []string{"k"}}})
		return err
	}
	// No credentials.
	wantRefusal(t, "no token", get(context.Background()), codes.Unauthenticated, auth.KindLoginRequired)
	// A wrong password.
	_, err := cairnpb.NewAuthClient(conn).Login(context.Background(), &cairnpb.LoginRequest{User: "writer", Password: "not-the-password"})
	wantRefusal(t, "wrong password", err, codes.Unauthenticated, auth.KindLoginFailed)
	// An expired token, signed with the store's own key.
	key, err := os.ReadFile(filepath.Join(dir, auth.TokenKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	old := auth.SignToken(key, auth.Claims{User: "writer", Role: auth.RoleReadWrite, Issued: time.Now().Add(-2 * time.Hour), Expires: time.Now().Add(-time.Hour)})
	wantRefusal(t, "expired token", get(bearerCtx(old)), codes.Unauthenticated, auth.KindTokenExpired)
	// A token of another store's key.
	forged := auth.SignToken(make([]byte, 32), auth.Claims{User: "admin", Role: auth.RoleSysAdmin, Issued: time.Now(), Expires: time.Now().Add(time.Hour)})
	wantRefusal(t, "forged token", get(bearerCtx(forged)), codes.Unauthenticated, auth.KindTokenInvalid)
	// A writer's session ends when its role changes.
	r, err := cairnpb.NewAuthClient(conn).Login(context.Background(), &cairnpb.LoginRequest{User: "writer", Password: readPassword(t, filepath.Join(dir, "writer.passwd"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := get(bearerCtx(r.GetToken())); err != nil {
		t.Fatalf("writer's fresh token: %v", err)
	}
	mustCairn(t, "security", "add-user", "--dir", dir, "--name", "writer", "--role", "readonly")
	waitFor(t, 5*time.Second, "the writer's old session to end", func() bool {
		_, d := errorDetail(get(bearerCtx(r.GetToken())))
		return d.GetKind() == auth.KindTokenRevoked
	})

	cancel()
	if err := <-readerErr; err != nil {
		t.Errorf("the reader was refused during the refusals: %v", err)
	}
	// The audit log has the logins and the failure, never a password.
	audit, err := os.ReadFile(filepath.Join(l.root, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"user":"reader","from":"127.0.0.1","what":"login","outcome":"ok"`, `"user":"writer","from":"127.0.0.1","what":"login","outcome":"error: wrong user or password"`} {
		if !strings.Contains(string(audit), want) {
			t.Errorf("audit.log lacks %s:\n%s", want, audit)
		}
	}
	if strings.Contains(string(audit), "not-the-password") {
		t.Error("audit.log holds a password")
	}
}

// runCairnUntil runs the binary until done says its result is final (at
// most d), and returns that result.
func runCairnUntil(t *testing.T, d time.Duration, done func(code int, errOut string) bool, args ...string) (int, string, string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		code, out, errOut := runCairn(t, args...)
		if done(code, errOut) || time.Now().After(deadline) {
			return code, out, errOut
		}
	}
}

// keepReading reads as the reader user until ctx ends; any error is one.
func keepReading(ctx context.Context, t *testing.T, addr, dir string) error {
	tc, err := auth.ClientTLS(filepath.Join(dir, auth.CAFile), "")
	if err != nil {
		return err
	}
	c, err := client.Open(ctx, client.Config{Hosts: []string{addr}, Store: "kvstore", TLS: tc,
		User: "reader", Password: readPassword(t, filepath.Join(dir, "reader.passwd"))})
	if err != nil {
		return err
	}
	defer c.Close()
	for ctx.Err() == nil {
		if _, _, err := c.Get(ctx, client.MustParseKey("/m/-/k")); err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

func readPassword(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func bearerCtx(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

func wantRefusal(t *testing.T, what string, err error, code codes.Code, kind string) {
	t.Helper()
	st, d := errorDetail(err)
	if st == nil || st.Code() != code || d.GetKind() != kind || d.GetAction() != cairnpb.ErrorDetail_ACTION_FIX_INPUT {
		t.Errorf("%s: %v (kind %q); want %v, kind %s, action FIX_INPUT", what, err, d.GetKind(), code, kind)
	}
}
