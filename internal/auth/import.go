package auth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// ImportDir makes a security directory from the operator's own PEM files
// instead of a CA of its own: the CA certificate (its key stays with the
// operator), this node's certificate and key. The node certificate must
// chain to the CA, match its key, be valid for both server and client use
// (nodes dial each other with it), and carry the node URI of the store
// (a URI SAN cairn-node://STORE), which is how a node tells a peer node
// from a user. The token key, the user table with its admin and the login
// file are made as InitDir makes them.
func ImportDir(dir, store, caFile, certFile, keyFile string) ([]string, error) {
	if store == "" {
		return nil, errors.New("auth: a store name is needed")
	}
	ca, err := readPEMCert(caFile)
	if err != nil {
		return nil, err
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("auth: the node certificate and key: %w", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", certFile, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			return nil, fmt.Errorf("auth: %s does not verify against %s for %s use (a node serves and dials with it): %w",
				certFile, caFile, usageName(usage), err)
		}
	}
	if !slices.ContainsFunc(leaf.URIs, func(u *url.URL) bool { return u.String() == NodeURI(store).String() }) {
		return nil, fmt.Errorf("auth: %s lacks the URI SAN %s: a node's certificate must name its store so that peers know it "+
			"for a node (add it to the certificate request)", certFile, NodeURI(store))
	}
	for _, f := range []string{CAFile, NodeCertFile, NodeKeyFile, TokenKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("auth: %s already exists; a security directory is made once", filepath.Join(dir, f))
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		from, to string
		perm     os.FileMode
	}{{caFile, CAFile, 0o644}, {certFile, NodeCertFile, 0o644}, {keyFile, NodeKeyFile, 0o600}} {
		b, err := os.ReadFile(c.from)
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		if err := writeFile(filepath.Join(dir, c.to), b, c.perm); err != nil {
			return nil, err
		}
	}
	if err := writeStoreKeys(dir); err != nil {
		return nil, err
	}
	return []string{CAFile, NodeCertFile, NodeKeyFile, TokenKeyFile, UsersFile, AdminPasswordFile, LoginFile}, nil
}

func usageName(u x509.ExtKeyUsage) string {
	if u == x509.ExtKeyUsageServerAuth {
		return "server"
	}
	return "client"
}

func readPEMCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth: the CA certificate: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("auth: %s is not a PEM certificate", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	if !c.IsCA {
		return nil, fmt.Errorf("auth: %s is not a CA certificate", path)
	}
	return c, nil
}
