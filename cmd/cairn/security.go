package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairndb/cairn/internal/auth"
	"github.com/spf13/cobra"
)

func newSecurityCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "security",
		Short: "Make a store's certificates and keys (secure mode)",
		Long: `Secure mode (docs/design/20261127_security.md): nodes speak TLS 1.3 on their
one port, and verify each other with certificates from the store's own CA.

  cairn security init      makes the store CA, this host's node certificate,
                           the token-signing key and a login file
  cairn security add-node  issues a certificate for another host from the CA
  cairn security add-user  creates a user of a secure lite store (or sets its
                           password and role), and writes its login file
  cairn security users     lists the users and their roles`,
		Args: noSubcommand,
	}
	cmd.AddCommand(newSecurityInitCmd(), newSecurityAddNodeCmd(), newSecurityAddUserCmd(), newSecurityUsersCmd())
	return cmd
}

func newSecurityInitCmd() *cobra.Command {
	var root, store, hosts, caCert, cert, key string
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Make the store CA, a node certificate, the token key and a login file in ROOT/security",
		Long: `Write ROOT/security: ca.pem and ca-key.pem (the store CA; keep the key offline
once every node has its certificate), node.pem and node-key.pem (this host's
certificate, for the names and addresses in --hosts), token.key (the key that
signs login tokens; every node of the store needs the same one) and
client.security (a login file for cairn kv/admin/bench --security). Keys are
written 0600. An existing security directory is never overwritten.

With --ca-cert, --cert and --key it takes the operator's own PEM files
instead of making a CA: the CA certificate (its key stays with you), and
this node's certificate and key, which must verify against the CA for server
and client use and carry the URI SAN cairn-node://STORE.`,
		Example: `  cairn security init --root /var/cairn/sn1 --store kvstore --hosts node1.example,10.0.0.1`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := filepath.Join(root, "security")
			if caCert != "" || cert != "" || key != "" {
				if caCert == "" || cert == "" || key == "" {
					return usageErr("--ca-cert, --cert and --key go together (the operator's CA certificate, node certificate and key)")
				}
				files, err := auth.ImportDir(dir, store, caCert, cert, key)
				if err != nil {
					return usageErr("%v", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s from your certificates: %s\n", dir, strings.Join(files, ", "))
				return nil
			}
			hs := splitHosts(hosts)
			if len(hs) == 0 {
				return usageErr("--hosts: give at least one host name or IP address that clients reach this node at")
			}
			files, err := auth.InitDir(dir, store, hs, time.Now())
			if err != nil {
				return usageErr("%v", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "wrote %s: %s\n", dir, strings.Join(files, ", "))
			fmt.Fprintf(out, "the node certificate names %s; for another host: cairn security add-node --ca %s --out DIR --hosts HOST\n",
				strings.Join(hs, ", "), dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "", "the node's directory; the files go to ROOT/security (required)")
	f.StringVar(&store, "store", "kvstore", "the store's name (it is written into every certificate)")
	f.StringVar(&hosts, "hosts", "127.0.0.1", "comma-separated host names and IP addresses of this node")
	f.StringVar(&caCert, "ca-cert", "", "your own CA certificate (PEM), instead of a new CA")
	f.StringVar(&cert, "cert", "", "with --ca-cert: this node's certificate (PEM), with the URI SAN cairn-node://STORE")
	f.StringVar(&key, "key", "", "with --ca-cert: this node's private key (PEM)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}

func newSecurityAddNodeCmd() *cobra.Command {
	var caDir, outDir, store, hosts string
	cmd := &cobra.Command{
		Use:   "add-node",
		Short: "Issue a node certificate for another host, signed by the store CA",
		Long: `Write node.pem and node-key.pem for another host into --out, signed by the CA
in --ca (a security directory made by 'cairn security init'). Copy --out with
the CA's ca.pem and token.key to that host as its ROOT/security.`,
		Example: `  cairn security add-node --ca /var/cairn/sn1/security --out /tmp/sn2-security --hosts node2.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hs := splitHosts(hosts)
			if len(hs) == 0 {
				return usageErr("--hosts: give at least one host name or IP address of the new node")
			}
			if err := auth.IssueNode(caDir, outDir, store, hs, time.Now()); err != nil {
				return usageErr("%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s and %s in %s for %s; copy %s and %s beside them\n",
				auth.NodeCertFile, auth.NodeKeyFile, outDir, strings.Join(hs, ", "), auth.CAFile, auth.TokenKeyFile)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&caDir, "ca", "", "the security directory that holds ca.pem and ca-key.pem (required)")
	f.StringVar(&outDir, "out", "", "where to write the new node's certificate and key (required)")
	f.StringVar(&store, "store", "kvstore", "the store's name")
	f.StringVar(&hosts, "hosts", "", "comma-separated host names and IP addresses of the new node (required)")
	_ = cmd.MarkFlagRequired("ca")
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("hosts")
	return cmd
}

func splitHosts(s string) []string {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

func newSecurityAddUserCmd() *cobra.Command {
	var dir, name, roleName, pwFile string
	cmd := &cobra.Command{
		Use:   "add-user",
		Short: "Create a user of a secure lite store, or set its password and role",
		Long: `Add a user to the user table in --dir (ROOT/security of a secure cairn lite;
a running lite reads the change within a second). The password is read from
--password-file, or generated and written to DIR/NAME.passwd (0600). A login
file for the user is written to DIR/NAME.security, for cairn kv|bench
--security. Setting a user's password or role again ends its sessions.

Roles: readonly (reads), readwrite (reads and writes), dbadmin (and plans,
topology, snapshots), sysadmin (and users and security).`,
		Example: `  cairn security add-user --dir /tmp/s/security --name alice --role readwrite
  cairn security add-user --dir /tmp/s/security --name bob --role readonly --password-file bob.pw`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			role, err := auth.ParseRole(roleName)
			if err != nil {
				return usageErr("--role: %v", err)
			}
			pw, pwPath, err := userPassword(dir, name, pwFile)
			if err != nil {
				return err
			}
			users, err := auth.OpenUsers(dir)
			if err != nil {
				return err
			}
			if err := users.Set(name, pw, role); err != nil {
				return usageErr("%v", err)
			}
			login := filepath.Join(dir, name+".security")
			text := fmt.Sprintf("# Cairn login file for %s: cairn kv|bench --security %s\ncairn.ssl.ca=%s\ncairn.auth.username=%s\ncairn.auth.password.file=%s\n",
				name, login, filepath.Join(dir, auth.CAFile), name, pwPath)
			if err := os.WriteFile(login, []byte(text), 0o600); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "user %s: role %s; login file %s\n", name, role, login)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "", "the security directory (ROOT/security of a secure lite) (required)")
	f.StringVar(&name, "name", "", "the user's name (required)")
	f.StringVar(&roleName, "role", "", "readonly, readwrite, dbadmin or sysadmin (required)")
	f.StringVar(&pwFile, "password-file", "", "a file whose first line is the password (default: generate one into DIR/NAME.passwd)")
	for _, r := range []string{"dir", "name", "role"} {
		_ = cmd.MarkFlagRequired(r)
	}
	return cmd
}

// userPassword reads the password file, or generates a password into
// DIR/NAME.passwd; it returns the password and the file that holds it.
func userPassword(dir, name, pwFile string) (string, string, error) {
	if pwFile != "" {
		l := auth.Login{User: name, PasswordFile: pwFile}
		pw, err := l.Password()
		if err != nil {
			return "", "", usageErr("--password-file: %v", err)
		}
		abs, _ := filepath.Abs(pwFile)
		return pw, abs, nil
	}
	pw, err := auth.NewPassword()
	if err != nil {
		return "", "", err
	}
	path := filepath.Join(dir, name+".passwd")
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", "", err
	}
	return pw, path, nil
}

func newSecurityUsersCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "users",
		Short: "List the users of a secure lite store and their roles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			users, err := auth.OpenUsers(dir)
			if err != nil {
				return err
			}
			for _, u := range users.Names() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", u[0], u[1])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the security directory (required)")
	_ = cmd.MarkFlagRequired("dir")
	return cmd
}
