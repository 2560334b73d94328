package node

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/auth"
	kvserver "github.com/cairndb/cairn/internal/server"
	"github.com/cairndb/cairn/internal/storage/files"
)

// SecurityDir is where a secure node keeps its certificates and keys.
func SecurityDir(root string) string { return filepath.Join(root, "security") }

// liteTLS is a secure lite node's TLS configuration. On first start it
// makes ROOT/security (a store CA and a certificate for the node's host,
// as `cairn security init` would), like KVLite's -secure-config enable.
func liteTLS(cfg LiteConfig, log *slog.Logger) (*tls.Config, error) {
	dir := SecurityDir(cfg.Root)
	if _, err := os.Stat(filepath.Join(dir, auth.CAFile)); errors.Is(err, fs.ErrNotExist) {
		hosts := certHosts(cfg.Host)
		if _, err := auth.InitDir(dir, cfg.Store, hosts, time.Now()); err != nil {
			return nil, err
		}
		log.Info("secure mode: made the store CA and this node's certificate", "dir", dir)
	}
	c, err := auth.ServerTLS(dir)
	if err != nil {
		return nil, err
	}
	// http/1.1 first: curl offers both and gets the HTTP/JSON API; gRPC
	// clients offer h2 alone.
	c.NextProtos = []string{"http/1.1", "h2", kvserver.ALPN}
	return c, nil
}

// certHosts are the names and addresses a node certificate made for a node
// listening on host names: host itself and loopback, and for "" or an
// unspecified address (every interface) the machine's name and each
// interface's address.
func certHosts(host string) []string {
	hosts := []string{"127.0.0.1", "localhost"}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return append(hosts, host)
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				hosts = append(hosts, n.IP.String())
			}
		}
	}
	return hosts
}

// selfTLS is the TLS configuration of a node's own client to itself (the
// HTTP API's forwarding client): nil for a plaintext node.
func selfTLS(root string, server *tls.Config) *tls.Config {
	if server == nil {
		return nil
	}
	c, err := auth.ClientTLS(filepath.Join(SecurityDir(root), auth.CAFile), SecurityDir(root))
	if err != nil {
		return nil // the server's own files just loaded; the client then fails to connect, visibly
	}
	return c
}

// Loopback reports whether host (an IP address or "localhost") names only
// this machine. Any other name, and "" (every interface), does not.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkExposure refuses to serve plaintext on an address other machines
// can reach, unless the operator said --insecure (the security design's
// safe default). secureHint says how this kind of node turns security on.
func checkExposure(host string, secure, insecure bool, secureHint string) error {
	if secure || insecure || Loopback(host) {
		return nil
	}
	return fmt.Errorf("host: %q is not a loopback address, and without security anyone who reaches it can read, write "+
		"and administer every record: %s, or pass --insecure to serve plaintext anyway", host, secureHint)
}

// InsecureWarning is the one line a node listening on host (at addr) logs
// when it serves plaintext on a non-loopback address because of --insecure
// ("" when there is nothing to say).
func InsecureWarning(host, addr string, secure bool) string {
	if secure || Loopback(host) {
		return ""
	}
	return fmt.Sprintf("INSECURE: serving plaintext on %s: anyone who reaches it can read, write and administer this store (--insecure)", addr)
}

// liteGuard is a secure lite node's logins and access checks: the user
// table in ROOT/security (made with an admin user if missing, as for a
// store made before users existed) and its audit log, ROOT/audit.log.
func (n *Lite) liteGuard(store string) (*auth.Guard, error) {
	dir := SecurityDir(n.cfg.Root)
	made, err := auth.EnsureUsers(dir)
	if err != nil {
		return nil, err
	}
	if made {
		n.log.Info("secure mode: made the user admin (role sysadmin); its login file logs in as admin",
			"login_file", filepath.Join(dir, auth.LoginFile))
	}
	if n.audit, err = files.OpenAppendLog(n.cfg.FS, filepath.Join(n.cfg.Root, AuditFile), auditMaxBytes, auditKeep); err != nil {
		return nil, err
	}
	return auth.NewGuard(dir, store, n.cfg.TokenLifetime, func(e auth.AuditEntry) {
		e.Node = "lite"
		if err := n.audit.Append(e.Line()); err != nil {
			n.log.Error("audit log: a login was not recorded", "err", err, "user", e.User, "what", e.What)
		}
	})
}

// checkDowngrade refuses to serve plaintext from a root that has a security
// directory: a secure store restarted without --secure would otherwise
// open every record to anyone who reaches the port.
func checkDowngrade(root string, secure bool) error {
	if secure || root == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(SecurityDir(root), auth.CAFile)); err != nil {
		return nil
	}
	return fmt.Errorf("secure: %s holds this store's security directory: start it with --secure (to serve plaintext instead, move that directory away first)", SecurityDir(root))
}
