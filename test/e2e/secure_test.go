package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/auth"
)

// TestPlaintextRefusedOffLoopback: a node asked to serve plaintext on an
// address other machines reach refuses to start (exit 2, naming --secure
// and --insecure) unless --insecure is given, and then says so in one line.
func TestPlaintextRefusedOffLoopback(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "lite")
	code, _, errOut := runCairn(t, "lite", "--root", root, "--host", "0.0.0.0", "--port", "0")
	if code != 2 || !strings.Contains(errOut, "--secure") || !strings.Contains(errOut, "--insecure") {
		t.Errorf("lite on 0.0.0.0: exit %d, stderr %q; want 2 naming --secure and --insecure", code, errOut)
	}
	p := startProc(t, "lite --insecure", "lite", "--root", root, "--host", "0.0.0.0", "--port", "0", "--insecure")
	defer p.stop()
	select {
	case <-p.stdout.ready:
	case <-p.exited:
		t.Fatalf("lite --insecure on 0.0.0.0 exited: %s", p.stderr.String())
	case <-time.After(exitTimeout):
		t.Fatal("lite --insecure on 0.0.0.0 did not become ready")
	}
	// stderr comes through a pipe of its own, maybe after the ready line.
	deadline := time.Now().Add(exitTimeout)
	for !strings.Contains(p.stderr.String(), "INSECURE:") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(p.stderr.String(), "INSECURE:"); n != 1 {
		t.Errorf("lite --insecure on 0.0.0.0 logged %d INSECURE lines, want 1:\n%s", n, p.stderr.String())
	}
}

// TestSecureLite is secure mode's transport on a real `cairn lite --secure`
// process: it makes its CA, certificate and login file on first start;
// clients with the login file work over gRPC and HTTPS; plaintext callers
// (gRPC and HTTP) and a client trusting another CA are refused with a
// clear answer, not a hang; and the node keeps serving throughout.
func TestSecureLite(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "lite")
	l := startLiteOpts(t, root, liteOpts{extra: []string{"--secure"}})
	login := filepath.Join(root, "security", auth.LoginFile)
	if !strings.Contains(l.stdout.String(), login) {
		t.Errorf("lite's start-up does not name the login file %s:\n%s", login, l.stdout.String())
	}

	mustCairn(t, "kv", "--hosts", l.addr, "--security", login, "put", "/a/-/b", "hello")
	if out := mustCairn(t, "kv", "--hosts", l.addr, "--security", login, "get", "/a/-/b"); out != "hello" {
		t.Errorf("secure get = %q, want hello", out)
	}

	// A plaintext kv client is refused: exit >= 2, told what to do.
	code, _, errOut := runCairn(t, "kv", "--hosts", l.addr, "get", "/a/-/b")
	if code < 2 || !strings.Contains(errOut, "secure mode") || !strings.Contains(errOut, "log in") || !strings.Contains(errOut, "--security") {
		t.Errorf("plaintext kv get: exit %d, stderr %q; want >= 2 saying to log in with --security", code, errOut)
	}

	// cairn bench with -security loads and runs with data integrity checks.
	common := []string{"-P", filepath.Join("..", "..", "workloads", "workloada"), "-db", "cairn", "-security", login,
		"-p", "cairn.hosts=" + l.addr, "-p", "recordcount=500", "-p", "operationcount=2000", "-p", "dataintegrity=true"}
	for _, phase := range []string{"load", "run"} {
		if out := mustCairn(t, append([]string{"bench", phase}, common...)...); strings.Contains(out, "ERROR") {
			t.Errorf("secure bench %s:\n%s", phase, out)
		}
	}

	// Plaintext HTTP gets a 426 with the JSON error.
	code, body := httpDo(t, "GET", "http://"+l.addr+"/v1/kv/a/-/b", nil)
	wantHTTP(t, "plaintext HTTP", code, body, http.StatusUpgradeRequired, map[string]any{"error.kind": "tls_required"})

	// HTTPS with the store CA works (curl --cacert ca.pem).
	hc, user, pw := httpsLogin(t, login)
	httpsGet := func(auth func(*http.Request)) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+l.addr+"/v1/kv/a/-/b", nil)
		auth(req)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("https get: %v", err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 {
			t.Errorf("https get: not TLS 1.3 (%v)", resp.TLS != nil)
		}
		return resp.StatusCode, string(raw)
	}
	// Without credentials: 401, told to log in.
	if code, body := httpsGet(func(*http.Request) {}); code != http.StatusUnauthorized || !strings.Contains(body, "login_required") {
		t.Errorf("https get without credentials: %d %s", code, body)
	}
	// Basic credentials (curl -u admin:PASSWORD --cacert ca.pem).
	if code, body := httpsGet(func(r *http.Request) { r.SetBasicAuth(user, pw) }); code != 200 || !strings.Contains(body, `"value": "hello"`) {
		t.Errorf("https get with Basic: %d %s", code, body)
	}
	// A token from POST /v1/login, as a Bearer.
	resp, err := hc.Post("https://"+l.addr+"/v1/login", "application/json",
		strings.NewReader(`{"user": "`+user+`", "password": "`+pw+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var lr struct {
		Token string `json:"token"`
		Role  string `json:"role"`
	}
	err = json.NewDecoder(resp.Body).Decode(&lr)
	resp.Body.Close()
	if err != nil || lr.Token == "" || lr.Role != "sysadmin" {
		t.Fatalf("POST /v1/login: %v %+v", err, lr)
	}
	if code, body := httpsGet(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+lr.Token) }); code != 200 || !strings.Contains(body, `"value": "hello"`) {
		t.Errorf("https get with a Bearer token: %d %s", code, body)
	}

	// A client that trusts another CA is refused at the handshake.
	other := filepath.Join(t.TempDir(), "other")
	if _, err := auth.InitDir(other, "kvstore", []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	otc, err := auth.ClientTLS(filepath.Join(other, auth.CAFile), "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := client.Open(ctx, client.Config{Hosts: []string{l.addr}, Store: "kvstore", TLS: otc, Timeout: 2 * time.Second}); err == nil {
		c.Close()
		t.Error("a client trusting another CA connected")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Errorf("another CA: %v, want a certificate error", err)
	}

	// The node still serves the right client, over the Go client too.
	c, err := client.Open(ctx, client.Config{Hosts: []string{l.addr}, Store: "kvstore", TLS: hc.Transport.(*http.Transport).TLSClientConfig, User: user, Password: pw})
	if err != nil {
		t.Fatalf("secure Go client: %v", err)
	}
	defer c.Close()
	rec, found, err := c.Get(ctx, client.MustParseKey("/a/-/b"))
	if err != nil || !found || string(rec.Value) != "hello" {
		t.Errorf("secure Go get after the refusals: %q %v %v", rec.Value, found, err)
	}

	// Restarted without --secure, the store refuses to serve plaintext.
	c.Close()
	l.stop()
	if code, _, errOut := runCairn(t, "lite", "--root", root, "--port", "0"); code != 2 || !strings.Contains(errOut, "start it with --secure") {
		t.Errorf("a secure store restarted without --secure: exit %d, %q", code, errOut)
	}
}
