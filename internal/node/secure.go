package node

import (
	"crypto/tls"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cairndb/cairn/internal/auth"
)

// SecurityDir is where a secure node keeps its certificates and keys.
func SecurityDir(root string) string { return filepath.Join(root, "security") }

// liteTLS is a secure lite node's TLS configuration. On first start it
// makes ROOT/security (a store CA and a certificate for the node's host,
// as `cairn security init` would), like KVLite's -secure-config enable.
func liteTLS(cfg LiteConfig, log *slog.Logger) (*tls.Config, error) {
	dir := SecurityDir(cfg.Root)
	if _, err := os.Stat(filepath.Join(dir, auth.CAFile)); errors.Is(err, fs.ErrNotExist) {
		hosts := []string{cfg.Host}
		if cfg.Host == "127.0.0.1" || cfg.Host == "localhost" {
			hosts = []string{"127.0.0.1", "localhost"}
		}
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
	c.NextProtos = []string{"http/1.1", "h2"}
	return c, nil
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
