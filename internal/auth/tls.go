package auth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

// ServerTLS is a secure node's TLS configuration, from its security
// directory: TLS 1.3 only, its node certificate, and client certificates
// asked for but not required (users log in with tokens; nodes present
// their certificates, which must chain to the store CA). ALPN offers h2
// (gRPC) and http/1.1 (the HTTP/JSON API).
func ServerTLS(dir string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, NodeCertFile), filepath.Join(dir, NodeKeyFile))
	if err != nil {
		return nil, fmt.Errorf("auth: the node certificate: %w", err)
	}
	pool, err := caPool(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
		NextProtos:   []string{"h2", "http/1.1"},
	}, nil
}

// ClientTLS is a caller's TLS configuration: TLS 1.3, the server verified
// against the store CA in caFile alone. A node calling another node also
// presents its own certificate (nodeDir: its security directory; "" for a
// user's client).
func ClientTLS(caFile, nodeDir string) (*tls.Config, error) {
	pool, err := caPool(caFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: pool}
	if nodeDir != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(nodeDir, NodeCertFile), filepath.Join(nodeDir, NodeKeyFile))
		if err != nil {
			return nil, fmt.Errorf("auth: the node certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// NodePeer reports whether a connection's peer is a node of store: it
// presented a certificate that crypto/tls verified against the store CA,
// and the certificate carries the store's node URI.
func NodePeer(cs tls.ConnectionState, store string) bool {
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return false
	}
	want := NodeURI(store).String()
	for _, u := range cs.VerifiedChains[0][0].URIs {
		if u.String() == want {
			return true
		}
	}
	return false
}

func caPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: the store CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("auth: %s holds no PEM certificate", path)
	}
	return pool, nil
}

// CertStore returns the store named by the node certificate in dir (its
// URI SAN cairn-node://STORE).
func CertStore(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, NodeCertFile))
	if err != nil {
		return "", fmt.Errorf("auth: the node certificate: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return "", fmt.Errorf("auth: %s is not PEM", filepath.Join(dir, NodeCertFile))
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return "", fmt.Errorf("auth: %s: %w", filepath.Join(dir, NodeCertFile), err)
	}
	for _, u := range c.URIs {
		if u.Scheme == "cairn-node" && u.Host != "" {
			return u.Host, nil
		}
	}
	return "", fmt.Errorf("auth: %s is not a node certificate (no cairn-node:// URI)", filepath.Join(dir, NodeCertFile))
}
