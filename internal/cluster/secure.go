package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cairndb/cairn/internal/auth"
)

// A secure local cluster (cluster start --secure) keeps the store's
// security directory at ROOT/security, as `cairn security init` makes it
// (the CA and its key, a node certificate for the cluster's host, the
// token key, the user table with its admin user, the admin's login file),
// and copies to each node's ROOT/nI/security what a node needs: the CA
// certificate, the node certificate and key, the token key and the user
// table. Every node shares the host, so one certificate serves them all.
const securityDir = "security"

var nodeSecurityFiles = []string{auth.CAFile, auth.NodeCertFile, auth.NodeKeyFile, auth.TokenKeyFile, auth.UsersFile}

func secureLayout(dir string, f *File) error {
	sd := filepath.Join(dir, securityDir)
	hosts := []string{f.Host}
	for _, h := range []string{"127.0.0.1", "localhost"} {
		if h != f.Host {
			hosts = append(hosts, h)
		}
	}
	if _, err := auth.InitDir(sd, f.Store, hosts, time.Now()); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	for _, n := range f.Nodes {
		nd := filepath.Join(n.Root, securityDir)
		if err := os.MkdirAll(nd, 0o700); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		for _, name := range nodeSecurityFiles {
			b, err := os.ReadFile(filepath.Join(sd, name))
			if err != nil {
				return fmt.Errorf("cluster: %w", err)
			}
			if err := os.WriteFile(filepath.Join(nd, name), b, 0o600); err != nil {
				return fmt.Errorf("cluster: node %d: %w", n.ID, err)
			}
		}
	}
	return nil
}

// loginFile is the secure cluster's admin login file, or "".
func loginFile(dir string) string {
	p := filepath.Join(dir, securityDir, auth.LoginFile)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// dialSecure returns the dial options of the cluster tool's connections to
// its nodes: TLS with the node certificate when the cluster is secure.
func dialSecure(dir string) ([]grpc.DialOption, error) {
	sd := filepath.Join(dir, securityDir)
	if _, err := os.Stat(filepath.Join(sd, auth.CAFile)); err != nil {
		return nil, nil
	}
	tc, err := auth.ClientTLS(filepath.Join(sd, auth.CAFile), sd)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(tc))}, nil
}
