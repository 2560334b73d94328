package auth

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func initDir(t *testing.T, store string, hosts ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "security")
	if _, err := InitDir(dir, store, hosts, time.Now()); err != nil {
		t.Fatalf("InitDir: %v", err)
	}
	return dir
}

func TestInitDirFiles(t *testing.T) {
	dir := initDir(t, "kvstore", "127.0.0.1", "localhost")
	for f, perm := range map[string]os.FileMode{CAFile: 0o644, CAKeyFile: 0o600, NodeCertFile: 0o644,
		NodeKeyFile: 0o600, TokenKeyFile: 0o600, LoginFile: 0o600} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if fi.Mode().Perm() != perm {
			t.Errorf("%s: mode %v, want %v", f, fi.Mode().Perm(), perm)
		}
	}
	login, _ := os.ReadFile(filepath.Join(dir, LoginFile))
	if !strings.Contains(string(login), "cairn.ssl.ca="+filepath.Join(dir, CAFile)) {
		t.Errorf("login file does not name the CA:\n%s", login)
	}
	if _, err := InitDir(dir, "kvstore", []string{"127.0.0.1"}, time.Now()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second InitDir = %v, want 'already exists'", err)
	}
	if _, err := InitDir(t.TempDir(), "", []string{"h"}, time.Now()); err == nil {
		t.Error("InitDir without a store name succeeded")
	}
}

// handshake runs one TLS handshake over a real loopback connection and
// returns the server's view of it, or the client's error.
func handshake(t *testing.T, srv, cli *tls.Config) (tls.ConnectionState, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan tls.ConnectionState, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(got)
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if tc.Handshake() == nil {
			got <- tc.ConnectionState()
			_, _ = io.Copy(io.Discard, tc)
		}
		close(got)
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(), cli)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	select {
	case cs, ok := <-got:
		if !ok {
			return tls.ConnectionState{}, errors.New("server handshake failed")
		}
		return cs, nil
	case <-time.After(10 * time.Second):
		t.Fatal("server handshake did not finish")
	}
	return tls.ConnectionState{}, nil
}

func TestTLSUserAndNodePeers(t *testing.T) {
	dir := initDir(t, "kvstore", "127.0.0.1")
	srv, err := ServerTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	user, err := ClientTLS(filepath.Join(dir, CAFile), "")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := handshake(t, srv, user)
	if err != nil {
		t.Fatalf("user handshake: %v", err)
	}
	if cs.Version != tls.VersionTLS13 || NodePeer(cs, "kvstore") {
		t.Errorf("user: version %x, node peer %v; want TLS 1.3, not a node", cs.Version, NodePeer(cs, "kvstore"))
	}
	node, err := ClientTLS(filepath.Join(dir, CAFile), dir)
	if err != nil {
		t.Fatal(err)
	}
	cs, err = handshake(t, srv, node)
	if err != nil {
		t.Fatalf("node handshake: %v", err)
	}
	if !NodePeer(cs, "kvstore") {
		t.Error("a node certificate of the store is not a node peer")
	}
	if NodePeer(cs, "otherstore") {
		t.Error("a node certificate of kvstore is a node peer of otherstore")
	}
}

func TestTLSRefusesOtherCA(t *testing.T) {
	ours := initDir(t, "kvstore", "127.0.0.1")
	theirs := initDir(t, "kvstore", "127.0.0.1") // same store name, another CA
	srv, err := ServerTLS(ours)
	if err != nil {
		t.Fatal(err)
	}
	// A client that trusts another CA refuses our server.
	cli, _ := ClientTLS(filepath.Join(theirs, CAFile), "")
	if _, err := handshake(t, srv, cli); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("client with another CA: %v, want a certificate error", err)
	}
	// A node with a certificate from another CA is refused by our server.
	impostor, _ := ClientTLS(filepath.Join(ours, CAFile), theirs)
	if cs, err := handshake(t, srv, impostor); err == nil && NodePeer(cs, "kvstore") {
		t.Error("a node certificate from another CA was accepted as a node")
	}
}

func TestIssueNodeForAnotherHost(t *testing.T) {
	ca := initDir(t, "kvstore", "127.0.0.1")
	other := filepath.Join(t.TempDir(), "node2")
	if err := IssueNode(ca, other, "kvstore", []string{"127.0.0.2", "node2.example"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := IssueNode(ca, other, "kvstore", []string{"127.0.0.2"}, time.Now()); err == nil {
		t.Error("IssueNode over an existing node.pem succeeded")
	}
	if err := os.WriteFile(filepath.Join(other, CAFile), mustRead(t, filepath.Join(ca, CAFile)), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := ServerTLS(other)
	if err != nil {
		t.Fatal(err)
	}
	cli, _ := ClientTLS(filepath.Join(ca, CAFile), ca)
	cli.ServerName = "node2.example"
	cs, err := handshake(t, srv, cli)
	if err != nil || !NodePeer(cs, "kvstore") {
		t.Fatalf("node1 -> node2: %v, node peer %v", err, NodePeer(cs, "kvstore"))
	}
	if err := IssueNode(t.TempDir(), t.TempDir(), "kvstore", []string{"h"}, time.Now()); err == nil || !strings.Contains(err.Error(), "store CA") {
		t.Errorf("IssueNode without a CA: %v, want an error naming the store CA", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadLogin(t *testing.T) {
	dir := initDir(t, "kvstore", "127.0.0.1")
	l, err := ReadLogin(filepath.Join(dir, LoginFile))
	if err != nil {
		t.Fatal(err)
	}
	if l.CAFile != filepath.Join(dir, CAFile) {
		t.Errorf("CA %q", l.CAFile)
	}
	if _, err := l.TLS(); err != nil {
		t.Errorf("TLS: %v", err)
	}
	p := filepath.Join(dir, "rel.security")
	if err := os.WriteFile(p, []byte("oracle.kv.transport=ssl\ncairn.ssl.ca=ca.pem\ncairn.auth.username=alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err = ReadLogin(p); err != nil || l.CAFile != filepath.Join(dir, CAFile) || l.User != "alice" {
		t.Errorf("relative: %+v, %v", l, err)
	}
	for body, want := range map[string]string{
		"cairn.auth.username=bob\n":          "cairn.ssl.ca",
		"cairn.ssl.ca\n":                     "key=value",
		"cairn.ssl.cert=x\ncairn.ssl.ca=y\n": "unknown key",
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLogin(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %q", body, err, want)
		}
	}
	if _, err := ReadLogin(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing login file was read")
	}
}
