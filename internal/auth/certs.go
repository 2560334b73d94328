package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The files of a security directory (see the package comment).
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	NodeCertFile   = "node.pem"
	NodeKeyFile    = "node-key.pem"
	TokenKeyFile   = "token.key"
	LoginFile      = "client.security"
	caLifetime     = 10 * 365 * 24 * time.Hour
	nodeLifetime   = 2 * 365 * 24 * time.Hour
	clockSkewSlack = time.Hour // certificates are valid from an hour ago
)

// NodeURI is the SAN that marks a certificate as a node of store.
func NodeURI(store string) *url.URL { return &url.URL{Scheme: "cairn-node", Host: store} }

// InitDir makes a new store CA, a node certificate for hosts (host names
// or IP addresses), a token-signing key and a login file in dir, which
// must not hold any of them yet. It returns the files written.
func InitDir(dir, store string, hosts []string, now time.Time) ([]string, error) {
	if store == "" || len(hosts) == 0 {
		return nil, errors.New("auth: a store name and at least one host are needed")
	}
	for _, f := range []string{CAFile, CAKeyFile, NodeCertFile, NodeKeyFile, TokenKeyFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("auth: %s already exists; a security directory is made once (use a new directory, or add-node for another host)", filepath.Join(dir, f))
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caCert, caKey, err := newCA(store, now)
	if err != nil {
		return nil, err
	}
	if err := writeCert(filepath.Join(dir, CAFile), caCert); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, CAKeyFile), caKey); err != nil {
		return nil, err
	}
	written := []string{CAFile, CAKeyFile}
	if err := IssueNode(dir, dir, store, hosts, now); err != nil {
		return nil, err
	}
	written = append(written, NodeCertFile, NodeKeyFile)
	if err := writeStoreKeys(dir); err != nil {
		return nil, err
	}
	return append(written, TokenKeyFile, UsersFile, AdminPasswordFile, LoginFile), nil
}

// IssueNode writes node.pem and node-key.pem into outDir for hosts, signed
// by the CA in caDir (ca.pem and ca-key.pem).
func IssueNode(caDir, outDir, store string, hosts []string, now time.Time) error {
	caCert, caKey, err := loadCA(caDir)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{Organization: []string{"Cairn store " + store}, CommonName: "cairn node " + hosts[0]},
		NotBefore:    now.Add(-clockSkewSlack),
		NotAfter:     now.Add(nodeLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:         []*url.URL{NodeURI(store)},
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("auth: sign the node certificate: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o700); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(outDir, NodeCertFile), pemBlock("CERTIFICATE", der), 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(outDir, NodeKeyFile), key)
}

func newCA(store string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{Organization: []string{"Cairn store " + store}, CommonName: "Cairn store CA " + store},
		NotBefore:             now.Add(-clockSkewSlack),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, nil, fmt.Errorf("auth: the store CA: %w", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("auth: the store CA's key (needed to issue certificates): %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("auth: %s or %s is not PEM", CAFile, CAKeyFile)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: %s: %w", CAFile, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("auth: %s: %w", CAKeyFile, err)
	}
	return cert, key, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writeCert(path string, c *x509.Certificate) error {
	return writeFile(path, pemBlock("CERTIFICATE", c.Raw), 0o644)
}

func writeKey(path string, k *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return err
	}
	return writeFile(path, pemBlock("EC PRIVATE KEY", der), 0o600)
}

// writeFile writes data to a new file at path (never over an existing
// one), synced before it is closed.
func writeFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("auth: sync %s: %w", path, err)
	}
	return f.Close()
}

// writeStoreKeys writes a new directory's token key (32 random bytes,
// 0600) and its user table with the admin user and login file.
func writeStoreKeys(dir string) error {
	tk := make([]byte, 32)
	if _, err := rand.Read(tk); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, TokenKeyFile), tk, 0o600); err != nil {
		return err
	}
	_, err := EnsureUsers(dir)
	return err
}
