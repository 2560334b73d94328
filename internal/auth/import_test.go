package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestImportDir(t *testing.T) {
	op := filepath.Join(t.TempDir(), "operator")
	if _, err := InitDir(op, "kvstore", []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	ca, cert, key := filepath.Join(op, CAFile), filepath.Join(op, NodeCertFile), filepath.Join(op, NodeKeyFile)
	dir := filepath.Join(t.TempDir(), "security")
	if _, err := ImportDir(dir, "kvstore", ca, cert, key); err != nil {
		t.Fatalf("ImportDir: %v", err)
	}
	if _, err := ServerTLS(dir); err != nil {
		t.Errorf("the imported directory serves no TLS: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
		t.Error("the operator's CA key was copied")
	}
	if _, _, err := ReadUsers(dir); err != nil {
		t.Error(err)
	}
	// Refusals: another store's name, another CA, a certificate without the node URI.
	if _, err := ImportDir(filepath.Join(t.TempDir(), "s"), "other", ca, cert, key); err == nil || !strings.Contains(err.Error(), "cairn-node://other") {
		t.Errorf("another store: %v", err)
	}
	other := filepath.Join(t.TempDir(), "other")
	if _, err := InitDir(other, "kvstore", []string{"127.0.0.1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportDir(filepath.Join(t.TempDir(), "s"), "kvstore", filepath.Join(other, CAFile), cert, key); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("another CA: %v", err)
	}
	caCert, caKey, err := loadCA(op)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "plain"}, NotBefore: time.Now().Add(-time.Minute),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	os.MkdirAll(plain, 0o700)
	c, _ := x509.ParseCertificate(der)
	if err := writeCert(filepath.Join(plain, "c.pem"), c); err != nil {
		t.Fatal(err)
	}
	if err := writeKey(filepath.Join(plain, "k.pem"), k); err != nil {
		t.Fatal(err)
	}
	if _, err := ImportDir(filepath.Join(t.TempDir(), "s"), "kvstore", ca, filepath.Join(plain, "c.pem"), filepath.Join(plain, "k.pem")); err == nil || !strings.Contains(err.Error(), "lacks the URI SAN") {
		t.Errorf("a certificate without the node URI: %v", err)
	}
}
