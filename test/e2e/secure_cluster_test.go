package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"

	"github.com/cairndb/cairn/internal/admin/controlpb"
	"github.com/cairndb/cairn/internal/auth"
)

// TestSecureWhitePaperDeployment is the white paper deployment in secure
// mode, on real `cairn sn start --secure` processes: one security
// directory (cairn security init) copied to every node; the admin script
// over TLS as the admin user; cairn bench workload A with data integrity
// as a readwrite user; refusals (plaintext admin, a readonly user's admin
// command, a user calling a node-only service, a node certificate from
// another CA); then certificate rotation: one node gets a new certificate
// from the CA and restarts, and the store keeps serving.
func TestSecureWhitePaperDeployment(t *testing.T) {
	t.Parallel() // real processes that mostly wait: run beside the other long tests
	nodes := initNodes(t, 3)
	sec := filepath.Join(t.TempDir(), "security")
	mustCairn(t, "security", "init", "--root", filepath.Dir(sec), "--store", "kvstore", "--hosts", "127.0.0.1")
	mustCairn(t, "security", "add-user", "--dir", sec, "--name", "app", "--role", "readwrite")
	mustCairn(t, "security", "add-user", "--dir", sec, "--name", "viewer", "--role", "readonly")
	mustCairn(t, "security", "add-user", "--dir", sec, "--name", "ops", "--role", "dbadmin")
	for _, sn := range nodes {
		copySecurity(t, sec, filepath.Join(sn.root, "security"))
		sn.extra = []string{"--secure"}
		sn.start(t)
	}
	login := filepath.Join(sec, auth.LoginFile)
	secAdmin := func(sn *storageNode, security string, args ...string) (int, string, string) {
		return runCairn(t, append([]string{"admin", "-host", "127.0.0.1", "-port", strconv.Itoa(sn.port), "-security", security}, args...)...)
	}
	before, deploy, after := whitePaperScript(t, nodes)
	script := append(append(before, deploy...), after...)
	code, out, errOut := secAdmin(nodes[0], login, "-script", writeScript(t, script))
	if code != 0 {
		t.Fatalf("secure white paper script: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"numPartitions=100", "shard=[rg1] num partitions=50", "0 violations"} {
		if !strings.Contains(out, want) {
			t.Errorf("secure white paper script output lacks %q:\n%s", want, out)
		}
	}
	if _, out, _ := secAdmin(nodes[1], login, "show", "topology"); !strings.Contains(out, "numPartitions=100") {
		t.Errorf("show topology through sn2:\n%s", out)
	}
	checkAudit(t, nodes[0].root, "plan deploy-admin -sn sn1 -wait")

	// Refusals: plaintext admin, a readonly user's admin command.
	if code, _, errOut := admin(t, nodes[0], "show", "topology"); code < 2 || !strings.Contains(errOut, "secure mode") {
		t.Errorf("plaintext admin: exit %d, %q", code, errOut)
	}
	viewer := filepath.Join(sec, "viewer.security")
	if code, out, errOut := secAdmin(nodes[0], viewer, "show", "topology"); code != 0 || !strings.Contains(out, "numPartitions=100") {
		t.Errorf("a readonly user's show topology: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := secAdmin(nodes[0], viewer, "plan", "deploy-zone", "-name", "Z2", "-rf", "1"); code != 2 ||
		!strings.Contains(out+errOut, "needs role dbadmin") {
		t.Errorf("a readonly user's plan: exit %d, %q %q", code, out, errOut)
	}

	checkSecureConsole(t, nodes[1], sec)

	// Users through the admin (sysadmin): create, log in, revoke, drop.
	if code, out, errOut := secAdmin(nodes[0], login, "plan", "create-user", "-name", "carol", "-password", "carol-pass-1", "-wait"); code != 0 {
		t.Fatalf("plan create-user: exit %d: %s %s", code, out, errOut)
	}
	carolPw := filepath.Join(t.TempDir(), "carol.pw")
	if err := os.WriteFile(carolPw, []byte("carol-pass-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	carol := filepath.Join(t.TempDir(), "carol.security")
	if err := os.WriteFile(carol, []byte("cairn.ssl.ca="+filepath.Join(sec, auth.CAFile)+"\ncairn.auth.username=carol\ncairn.auth.password.file="+carolPw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	putAs := func(who string) (int, string) {
		code, _, errOut := runCairn(t, "kv", "--hosts", nodes[2].addr(), "--security", who, "put", "/users/-/x", "y")
		return code, errOut
	}
	waitFor(t, 10*time.Second, "carol's login on sn3", func() bool { code, _ := putAs(carol); return code == 0 })
	if _, out, _ := secAdmin(nodes[1], login, "show", "users"); !strings.Contains(out, "user: carol  role: readwrite") || strings.Contains(out, "argon2") {
		t.Errorf("show users:\n%s", out)
	}
	if code, out, errOut := secAdmin(nodes[0], filepath.Join(sec, "ops.security"), "plan", "create-user", "-name", "mallory", "-password", "mallory-pass"); code != 2 ||
		!strings.Contains(out+errOut, "needs role sysadmin") {
		t.Errorf("a dbadmin user's create-user: exit %d, %q %q", code, out, errOut)
	}
	// The HTTP API keeps carol's Basic login's token (one login for many
	// requests); after the revoke below ends that session, it drops the
	// refused token and logs in again, so carol still reads.
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConfig(t, sec)}}
	carolGet := "https://" + nodes[2].addr() + "/v1/kv/users/-/x"
	if code, _, body := webGet(t, hc, carolGet, "carol", "carol-pass-1"); code != 200 {
		t.Fatalf("carol's Basic read: %d %s", code, body)
	}
	mustCairn(t, "admin", "-port", strconv.Itoa(nodes[0].port), "-security", login, "plan", "revoke", "-role", "readwrite", "-user", "carol")
	waitFor(t, 10*time.Second, "carol's writes refused after the revoke", func() bool {
		code, errOut := putAs(carol)
		return code == 2 && strings.Contains(errOut, "needs role readwrite")
	})
	var last string
	for range 2 { // the first may be refused with the revoked session's token; the second logs in again
		code, _, body := webGet(t, hc, carolGet, "carol", "carol-pass-1")
		if last = fmt.Sprint(code, " ", body); code == 200 {
			break
		}
	}
	if !strings.HasPrefix(last, "200 ") {
		t.Errorf("carol's Basic read after the revoke: %s; want the HTTP API to log in again", last)
	}
	mustCairn(t, "admin", "-port", strconv.Itoa(nodes[0].port), "-security", login, "plan", "drop-user", "-name", "carol")
	waitFor(t, 10*time.Second, "carol's login refused after the drop", func() bool {
		code, errOut := putAs(carol)
		return code == 2 && strings.Contains(errOut, "login failed")
	})
	audit, err := os.ReadFile(filepath.Join(nodes[0].root, "audit.log"))
	if err != nil || !strings.Contains(string(audit), `"user":"admin"`) || !strings.Contains(string(audit), "plan create-user -name carol -password ***") ||
		strings.Contains(string(audit), "carol-pass-1") {
		t.Errorf("audit log of the user commands (%v):\n%s", err, audit)
	}

	// cairn bench workload A with data integrity, as the readwrite user.
	hosts := nodes[0].addr() + "," + nodes[1].addr() + "," + nodes[2].addr()
	appLogin := filepath.Join(sec, "app.security")
	common := []string{"-P", filepath.Join("..", "..", "workloads", "workloada"), "-db", "cairn", "-security", appLogin,
		"-p", "cairn.hosts=" + hosts, "-p", "recordcount=1000", "-p", "operationcount=3000", "-p", "dataintegrity=true"}
	for _, phase := range []string{"load", "run"} {
		if out := mustCairn(t, append([]string{"bench", phase}, common...)...); strings.Contains(out, "ERROR") || !strings.Contains(out, "Return=OK") {
			t.Errorf("secure bench %s:\n%s", phase, out)
		}
	}

	// Node-only services: a user's login is not enough, and a certificate
	// from another CA does not get through the handshake.
	userConn := tlsConn(t, nodes[0].addr(), sec, "")
	_, err = controlpb.NewControlClient(userConn).Describe(context.Background(), &controlpb.DescribeRequest{})
	if st, _ := errorDetail(err); st == nil || st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "only a storage node") {
		t.Errorf("a caller without a node certificate on Control: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, err := auth.InitDir(other, "kvstore", []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	otherConn := tlsConn(t, nodes[0].addr(), other, other)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := controlpb.NewControlClient(otherConn).Describe(ctx, &controlpb.DescribeRequest{}); err == nil {
		t.Error("a node certificate from another CA called Control")
	}

	// Certificate rotation: sn2 gets a new certificate from the store CA
	// and restarts; the store keeps serving, through sn2 too.
	rotated := filepath.Join(t.TempDir(), "rotated")
	mustCairn(t, "security", "add-node", "--ca", sec, "--out", rotated, "--store", "kvstore", "--hosts", "127.0.0.1")
	nodes[1].stop()
	for _, f := range []string{auth.NodeCertFile, auth.NodeKeyFile} {
		b, err := os.ReadFile(filepath.Join(rotated, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(nodes[1].root, "security", f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	nodes[1].start(t)
	waitFor(t, 30*time.Second, "a write through the rotated node", func() bool {
		code, _, _ := runCairn(t, "kv", "--hosts", nodes[1].addr(), "--security", appLogin, "put", "/rot/-/k", "v")
		return code == 0
	})
	if out := mustCairn(t, "kv", "--hosts", hosts, "--security", appLogin, "get", "/rot/-/k"); out != "v" {
		t.Errorf("get after rotation = %q", out)
	}
	if out := mustCairn(t, append([]string{"bench", "run"}, common...)...); strings.Contains(out, "ERROR") {
		t.Errorf("bench after rotation:\n%s", out)
	}
}

// copySecurity copies what a node needs from a security directory.
func copySecurity(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{auth.CAFile, auth.NodeCertFile, auth.NodeKeyFile, auth.TokenKeyFile, auth.UsersFile} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// tlsConn dials addr trusting caDir's CA, presenting certDir's node
// certificate if certDir is set.
func tlsConn(t *testing.T, addr, caDir, certDir string) *grpc.ClientConn {
	t.Helper()
	tc, err := auth.ClientTLS(filepath.Join(caDir, auth.CAFile), certDir)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
