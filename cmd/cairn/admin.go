package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/shell"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

const adminUsage = `Usage: cairn admin [-host HOST] [-port PORT] [-helper-hosts HOST:PORT,...]
                   [-security FILE] [-json] [-failover-timeout DURATION]
                   [-script FILE] [COMMAND [OPTIONS]]

The admin shell (Oracle NoSQL's runadmin): name the store, deploy zones,
storage nodes, admins and topologies, run and follow plans, check health.
Any storage node takes the commands and passes them to the admin leader.

  cairn admin                          the kv-> prompt (history in ~/.cairn_admin_history)
  cairn admin show topology            run one command
  cairn admin -script setup.kvs        run a script; stop at the first failure
  cairn admin < setup.kvs              the same, from stdin

Options take one or two dashes, and -opt=value also works:
  -host HOST                 a storage node's host (default 127.0.0.1)
  -port PORT                 its port (default 5000)
  -helper-hosts HOST:PORT,.. more storage nodes, tried in order when one is down
                             (without -host and -port, only these)
  -security FILE             a secure store: the login file (store CA, user,
                             password file) to log in with over TLS; admin
                             commands need the role dbadmin
  -json                      print each command's result as a JSON document
  -failover-timeout DURATION how long a -wait keeps asking the admins for its
                             plan when none answers (its node was lost, or
                             the admins lost their leader) before it exits 3;
                             the plan goes on (default 30s)
  -script FILE               run the commands in FILE
  -h, -help                  show this help

Exit codes: 0 ok; 1 a command failed, found problems, or its plan did not
succeed; 2 usage error (also a missing script file, or a request the admin
rejected as invalid); 3 no storage node reachable, no admin leader for now,
or timed out. See 'cairn --help'.

`

// adminFlags are the options of cairn admin itself.
const adminFlags = "-host, -port, -helper-hosts, -security, -json, -failover-timeout, -script, -help"

// adminArgs is a parsed cairn admin command line.
type adminArgs struct {
	host     string
	port     int
	hostSet  bool // -host or -port given
	helpers  []string
	json     bool
	security string
	script   string
	failover time.Duration // -failover-timeout; 0: the shell's default
	help     bool
	commands []string // the admin command and its options, if given
}

// addrs returns the storage nodes to talk to, in order.
func (a adminArgs) addrs() []string {
	var addrs []string
	if a.hostSet || len(a.helpers) == 0 {
		addrs = append(addrs, net.JoinHostPort(a.host, strconv.Itoa(a.port)))
	}
	return append(addrs, a.helpers...)
}

func adminUsageErr(format string, args ...any) error {
	return fmt.Errorf(format+" (see 'cairn admin --help')", args...)
}

// parseAdminArgs parses cairn admin's options up to the first word that is
// not one; that word and the rest are the admin command.
func parseAdminArgs(args []string) (adminArgs, error) {
	a := adminArgs{host: "127.0.0.1", port: 5000}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.commands = args[i+1:]
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.commands = args[i:]
			break
		}
		name := strings.TrimPrefix(arg[1:], "-")
		val, hasVal := "", false
		if j := strings.IndexByte(name, '='); j >= 0 {
			name, val, hasVal = name[:j], name[j+1:], true
		}
		value := func() (string, error) {
			if !hasVal {
				if i+1 >= len(args) {
					return "", adminUsageErr("option -%s needs a value", name)
				}
				i++
				val = args[i]
			}
			if strings.TrimSpace(val) == "" {
				return "", adminUsageErr("option -%s needs a value", name)
			}
			return val, nil
		}
		var err error
		switch name {
		case "h", "help":
			a.help = true
			return a, nil
		case "host":
			if a.host, err = value(); err == nil {
				err = checkAdminHost(a.host)
			}
			a.hostSet = true
		case "port":
			var v string
			if v, err = value(); err == nil {
				if a.port, err = strconv.Atoi(v); err != nil || a.port < 1 || a.port > 65535 {
					err = adminUsageErr("option -port wants a port number (1-65535), not %q", v)
				}
			}
			a.hostSet = true
		case "helper-hosts":
			var v string
			if v, err = value(); err == nil {
				for _, h := range strings.Split(v, ",") {
					if h = strings.TrimSpace(h); h == "" {
						continue
					}
					if _, _, serr := net.SplitHostPort(h); serr != nil {
						return a, adminUsageErr("option -helper-hosts wants host:port,..., not %q", h)
					}
					a.helpers = append(a.helpers, h)
				}
			}
		case "json":
			if hasVal {
				if a.json, err = strconv.ParseBool(val); err != nil {
					err = adminUsageErr("option -json wants true or false, not %q", val)
				}
			} else {
				a.json = true
			}
		case "script":
			a.script, err = value()
		case "failover-timeout":
			var v string
			if v, err = value(); err == nil {
				if a.failover, err = time.ParseDuration(v); err != nil || a.failover <= 0 {
					err = adminUsageErr("option -failover-timeout wants a positive duration (30s, 2m), not %q", v)
				}
			}
		case "security":
			a.security, err = value()
		default:
			err = adminUsageErr("unknown option %q; the options are %s", arg, adminFlags)
		}
		if err != nil {
			return a, err
		}
	}
	if len(a.commands) == 1 && a.commands[0] == "help" {
		a.help, a.commands = true, nil
	}
	if a.script != "" && len(a.commands) > 0 {
		return a, adminUsageErr("give -script FILE or a command, not both")
	}
	return a, nil
}

// checkAdminHost refuses a -host value with a port in it (HOST:PORT),
// which would otherwise be dialed as HOST:PORT:5000 and fail as
// unreachable: the port goes in -port.
func checkAdminHost(h string) error {
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return nil // no port: a host name, an IPv4 or a bare IPv6 address
	}
	if port == "" {
		port = "PORT"
	}
	return adminUsageErr("option -host wants a host without a port, not %q: give the port with -port, as in -host %s -port %s", h, host, port)
}

// newAdminCmd returns "cairn admin". Its options take one or two dashes,
// as Oracle's runadmin does, so cobra does not parse them.
func newAdminCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "admin [-host HOST] [-port PORT] [-helper-hosts LIST] [-security FILE] [-json] [-failover-timeout DURATION] [-script FILE] [COMMAND...]",
		Short:              "The admin shell: deploy zones, storage nodes and topologies, run plans (runadmin)",
		Long:               adminUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAdmin(cmd.Context(), args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runAdmin parses args and runs the shell in the mode they choose.
func runAdmin(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	a, err := parseAdminArgs(args)
	if err == nil {
		a.commands, err = splitQuotedCommand(a.commands)
	}
	if err != nil {
		fmt.Fprintf(errw, "cairn admin: %v\n", err)
		return &exitError{code: shell.ExitUsage, err: reported{}}
	}
	if a.help {
		_, err := io.WriteString(out, adminUsage+shell.HelpText())
		return err
	}
	if a.script != "" { // before dialing: a script that cannot be read needs no node
		f, err := shell.OpenScript(a.script)
		if err != nil {
			fmt.Fprintf(errw, "cairn admin: -script: %v\n", err)
			return &exitError{code: shell.ExitUsage, err: reported{}}
		}
		f.Close()
	}
	c, err := dialAdmin(ctx, a)
	if err != nil {
		fmt.Fprintf(errw, "cairn admin: %v\n", err)
		return &exitError{code: adminDialExit(err), err: reported{}}
	}
	defer c.Close()
	sh := &shell.Shell{Caller: c, In: in, Out: out, Err: errw, JSON: a.json, FailoverTimeout: a.failover}
	if f, ok := errw.(*os.File); ok && !a.json && term.IsTerminal(int(f.Fd())) {
		sh.Progress = f // -wait redraws a progress line there
	}
	var code int
	switch f, isFile := in.(*os.File); {
	case len(a.commands) > 0:
		code = sh.RunCommand(ctx, a.commands)
	case a.script != "":
		code = sh.RunFile(ctx, a.script)
	case isFile && term.IsTerminal(int(f.Fd())):
		code = sh.RunTerminal(ctx, f, historyPath())
	default:
		code = sh.RunStdin(ctx)
	}
	if code != shell.ExitOK {
		return &exitError{code: code, err: reported{}}
	}
	return nil
}

// historyPath is ~/.cairn_admin_history, or "" without a home directory.
func historyPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cairn_admin_history")
}

// splitQuotedCommand splits a command given as one quoted argument
// (cairn admin 'show zones', common through ssh) into its words.
func splitQuotedCommand(words []string) ([]string, error) {
	if len(words) != 1 || !strings.ContainsAny(words[0], " \t") {
		return words, nil
	}
	return shell.Tokenize(words[0])
}

// dialAdmin connects to a's storage nodes, over TLS with a login when a
// names a login file.
func dialAdmin(ctx context.Context, a adminArgs) (*admin.Client, error) {
	if a.security == "" {
		return admin.Dial(a.addrs())
	}
	l, err := auth.ReadLogin(a.security)
	if err != nil {
		return nil, fmt.Errorf("-security: %w", err)
	}
	tc, err := l.TLS()
	if err != nil {
		return nil, fmt.Errorf("-security: %w", err)
	}
	pw, err := l.Password()
	if err != nil {
		return nil, fmt.Errorf("-security: %w", err)
	}
	if l.User == "" {
		return nil, fmt.Errorf("-security: %s names no user (cairn.auth.username): admin commands need a login", a.security)
	}
	var s admin.Session
	c, err := admin.Dial(a.addrs(), grpc.WithTransportCredentials(credentials.NewTLS(tc)), grpc.WithPerRPCCredentials(&s))
	if err != nil {
		return nil, err
	}
	tok, err := c.Login(ctx, l.User, pw)
	if err != nil {
		c.Close()
		return nil, loginError{fmt.Errorf("login as %q: %s", l.User, status.Convert(err).Message()), status.Code(err)}
	}
	s.SetToken(tok)
	return c, nil
}

// loginError is a failed login: exit 2 when refused, 3 when no node answered.
type loginError struct {
	err  error
	code codes.Code
}

func (e loginError) Error() string { return e.err.Error() }

func adminDialExit(err error) int {
	var le loginError
	if errors.As(err, &le) && le.code != codes.Unauthenticated && le.code != codes.PermissionDenied {
		return shell.ExitUnreachable
	}
	return shell.ExitUsage
}
