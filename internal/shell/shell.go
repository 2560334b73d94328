package shell

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
	"github.com/cairndb/cairn/internal/exitcode"
)

// Exit codes returned by the Run functions: package exitcode's table, which
// every cairn command shares.
const (
	ExitOK          = exitcode.OK          // success
	ExitFailed      = exitcode.Failed      // a command failed, reported problems, or its plan did not succeed
	ExitUsage       = exitcode.Usage       // bad command line, missing script file, or a request the admin rejected as invalid
	ExitUnreachable = exitcode.Unavailable // no storage node answered, no admin leader for now, or timed out
)

// Prompt is the interactive prompt; scripts echo each command after it.
const Prompt = "kv-> "

// MaxLoadDepth bounds how deeply load -file may nest.
const MaxLoadDepth = 10

// Defaults of the Shell's optional fields.
const (
	DefaultWaitTimeout     = 10 * time.Minute
	DefaultRetryEvery      = time.Second
	DefaultFailoverTimeout = 30 * time.Second
)

// Caller sends one admin command: the canonical name (admin.Command.Name)
// and its options without dashes. *admin.Client satisfies it.
type Caller interface {
	Call(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error)
}

// NodeCaller is a Caller that can also send a command to one node of its
// choice, with the same credentials. *admin.Client satisfies it. Given
// one, -wait follows a plan through one node at a time and, when that
// node stops answering, through the other admins (see follower).
type NodeCaller interface {
	Caller
	// Addrs returns the nodes Call tries, in order.
	Addrs() []string
	// CallAt sends the command to the node at addr only; an error wrapping
	// admin.ErrUnreachable means that node could not be reached.
	CallAt(ctx context.Context, addr, command string, args map[string]string) (*cairnpb.AdminReply, error)
}

// Shell runs admin command lines. Set Caller, In, Out and Err; the rest is
// optional. See the package doc for its modes and exit codes. A Shell is
// used by one goroutine.
type Shell struct {
	Caller Caller
	In     io.Reader // stdin: RunStdin reads commands from it
	Out    io.Writer // replies, echoed script lines, help; JSON documents with JSON set
	Err    io.Writer // "Error: ..." lines
	// JSON prints each command's reply as an indented JSON document, and
	// errors as {"error": "..."} on Out.
	JSON bool
	// WaitTimeout bounds how long -wait follows a plan, retrying when no
	// node answers. Default DefaultWaitTimeout (10 minutes).
	WaitTimeout time.Duration
	// RetryEvery is the pause between plan wait calls that failed because no
	// node answered or that came back at once. Default DefaultRetryEvery (1 s).
	RetryEvery time.Duration
	// FailoverTimeout bounds how long -wait asks for its plan after the
	// node it followed stopped answering: when no admin has answered by
	// then, the command ends with ExitUnreachable (the plan goes on).
	// Default DefaultFailoverTimeout (30 s).
	FailoverTimeout time.Duration
	// Progress, when set (a terminal), gets one line that -wait rewrites in
	// place while a plan runs: its Moves line, or its running task's
	// progress. Nil: -wait prints nothing until the plan ends.
	Progress io.Writer

	hist    history
	depth   int      // load nesting
	dir     string   // directory of the script being run; "" at the top
	running []string // absolute paths of the scripts being run, outermost first
}

// status is the outcome of one command line.
type status struct {
	code int
	msg  string // what went wrong; "" when code is 0
	// shown: the command's own output already explains the failure (a
	// report with problems, or a plan's final state in JSON mode), so only
	// a script's location line is added.
	shown bool
	at    bool // msg starts with a script location (FILE:LINE: )
	exit  bool // exit or quit: stop reading commands
}

// failure turns an error into a status with its exit code: ExitUsage for a
// command line that was not sent or that the admin rejected as invalid;
// ExitUnreachable when no node answered, the admin could not serve it for
// now (gRPC Unavailable: no leader yet) or it timed out; ExitFailed else.
func failure(err error) status {
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		return status{code: ExitUsage, msg: ue.msg}
	case errors.Is(err, admin.ErrUnreachable):
		return status{code: ExitUnreachable, msg: admin.Message(err)}
	case grpcstatus.Code(err) == codes.Canceled || errors.Is(err, context.Canceled):
		return status{code: ExitFailed, msg: "interrupted"}
	case grpcstatus.Code(err) == codes.DeadlineExceeded || errors.Is(err, context.DeadlineExceeded):
		return status{code: ExitUnreachable, msg: "the admin did not answer in time (" + admin.Message(err) + "); check with show plans or show events before retrying"}
	}
	return status{code: exitcode.Of(err), msg: admin.Message(err)}
}

// ExitCode is the exit code of an admin call that failed with err, as the
// shell gives it: ExitUsage for a request the admin rejected as invalid,
// ExitUnreachable when no node answered, there is no admin leader yet or
// the call timed out, ExitFailed else. For callers outside the shell, such
// as cairn sn start --rejoin-as.
func ExitCode(err error) int {
	return failure(err).code
}

// reachTimeout bounds the interactive shell's first ping (warnUnreachable).
const reachTimeout = 2 * time.Second

// warnUnreachable pings the admin once and, when no node answers or the
// node has no admin service, prints a warning line on Err, so a wrong host
// or port shows before the first command is typed. A slow answer (the
// admin has no leader yet) is not waited for, and not warned about.
func (s *Shell) warnUnreachable(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	_, err := s.Caller.Call(ctx, "ping", nil)
	if errors.Is(err, admin.ErrUnreachable) || grpcstatus.Code(err) == codes.Unimplemented {
		fmt.Fprintf(s.Err, "Warning: %s\nAdmin commands will fail until this is fixed (check -host and -port); exit or Ctrl-D to leave.\n", admin.Message(err))
	}
}

// RunCommand runs one command given as words (already split, as by the
// operating system's shell) and returns its exit code.
func (s *Shell) RunCommand(ctx context.Context, words []string) int {
	st := s.exec(ctx, words)
	s.report(st)
	return st.code
}

// RunScript runs the commands read from r, stopping at the first failure.
// name is used in messages ("name:LINE: ..."). It returns the exit code of
// the failed command, or 0.
func (s *Shell) RunScript(ctx context.Context, name string, r io.Reader) int {
	st := s.script(ctx, name, r)
	s.report(st)
	return st.code
}

// RunStdin runs In as a script named "stdin".
func (s *Shell) RunStdin(ctx context.Context) int {
	return s.RunScript(ctx, "stdin", s.In)
}

// RunFile runs the script file at path, as load -file does.
func (s *Shell) RunFile(ctx context.Context, path string) int {
	st := s.load(ctx, path)
	s.report(st)
	return st.code
}

// report prints a failed status: "Error: msg" on Err, or {"error": msg} on
// Out in JSON mode.
func (s *Shell) report(st status) {
	if st.code == ExitOK || st.msg == "" || (st.shown && !st.at) {
		return
	}
	if s.JSON && !st.shown {
		s.writeJSON(map[string]string{"error": st.msg})
		return
	}
	fmt.Fprintf(s.Err, "Error: %s\n", st.msg)
}

// execLine splits line into words and runs it.
func (s *Shell) execLine(ctx context.Context, line string) status {
	words, err := Tokenize(line)
	if err != nil {
		return failure(err)
	}
	return s.exec(ctx, words)
}

// exec runs one command line: a local command, or an admin command sent
// through the Caller.
func (s *Shell) exec(ctx context.Context, words []string) status {
	if len(words) == 0 {
		return status{}
	}
	switch words[0] {
	case "help":
		return s.help(words[1:])
	case "exit", "quit", "history", "load":
		c, _ := localCommand(words[0])
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") {
			return failure(usagef("%s: unexpected argument %q (usage: %s)", c.Name, words[1], c.Usage()))
		}
		args, err := parseOptions(c, words[1:])
		if err != nil {
			return failure(err)
		}
		switch c.Name {
		case "history":
			s.hist.print(s.Out)
			return status{}
		case "load":
			return s.load(ctx, args["file"])
		}
		return status{exit: true}
	}
	c, args, err := Parse(words)
	if err != nil {
		return failure(err)
	}
	return s.run(ctx, c, args)
}

// run sends a parsed admin command and prints its reply.
func (s *Shell) run(ctx context.Context, c admin.Command, args map[string]string) status {
	reply, err := s.Caller.Call(ctx, c.Name, args)
	if err != nil {
		return failure(err)
	}
	if args["wait"] == "true" && !c.Immediate { // an immediate command is done when it answers
		if !s.JSON {
			s.writeText(reply.GetText())
		}
		return s.waitPlan(ctx, c, args, reply)
	}
	s.print(reply)
	if reply.GetProblems() {
		return status{code: ExitFailed, msg: c.Name + " found problems", shown: true}
	}
	return status{}
}

// print writes a reply: its text, or its JSON document.
func (s *Shell) print(r *cairnpb.AdminReply) {
	if !s.JSON {
		s.writeText(r.GetText())
		return
	}
	doc := r.GetJson()
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}")
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc, "", "  "); err != nil {
		buf.Reset()
		buf.Write(doc) // not JSON: print it as it came
	}
	buf.WriteByte('\n')
	_, _ = s.Out.Write(buf.Bytes())
}

func (s *Shell) writeText(text string) {
	if text == "" {
		return
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, _ = io.WriteString(s.Out, text)
}

func (s *Shell) writeJSON(v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	_, _ = s.Out.Write(append(b, '\n'))
}

// maxLine is the longest script line: bufio.Scanner's buffer limit.
const maxLine = 1 << 20

// script runs the commands read from r until the first failure, which it
// returns with msg prefixed by "name:LINE: ". A line longer than maxLine
// is a usage error at its line.
func (s *Shell) script(ctx context.Context, name string, r io.Reader) status {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		st := s.scriptLine(ctx, n, sc.Text())
		if st.exit {
			return st
		}
		if st.code != ExitOK {
			if st.msg == "" {
				st.msg = "failed"
			}
			st.msg = fmt.Sprintf("%s:%d: %s", name, n, st.msg)
			st.at = true
			return st
		}
	}
	switch err := sc.Err(); {
	case errors.Is(err, bufio.ErrTooLong):
		return status{code: ExitUsage, msg: fmt.Sprintf("%s:%d: the line is longer than %d bytes (1 MiB), the most a script line may hold", name, n+1, maxLine), at: true}
	case err != nil:
		return status{code: ExitFailed, msg: fmt.Sprintf("%s: %v", name, err)}
	}
	return status{}
}

// scriptLine runs line n of a script, echoed after the prompt; blank
// lines and # comments are skipped.
func (s *Shell) scriptLine(ctx context.Context, n int, line string) status {
	if n == 1 {
		line = strings.TrimPrefix(line, "\ufeff") // a byte order mark
	}
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return status{}
	}
	if !s.JSON {
		fmt.Fprintf(s.Out, "%s%s\n", Prompt, line)
	}
	return s.execLine(ctx, line)
}

// load runs the script file at path: relative to the running script's
// directory, if any. A script that is running already (one that loads
// itself, directly or through others) is refused: it would never end.
func (s *Shell) load(ctx context.Context, path string) status {
	if s.depth >= MaxLoadDepth {
		return status{code: ExitUsage, msg: fmt.Sprintf("load: scripts nested more than %d deep", MaxLoadDepth)}
	}
	if !filepath.IsAbs(path) && s.dir != "" {
		path = filepath.Join(s.dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return status{code: ExitUsage, msg: "load: " + err.Error()}
	}
	if slices.Contains(s.running, abs) {
		return status{code: ExitUsage, msg: fmt.Sprintf("load: %s is running already: a script that loads itself, directly or through others, never ends", path)}
	}
	f, err := OpenScript(path)
	if err != nil {
		return status{code: ExitUsage, msg: "load: " + err.Error()} // a file to name right
	}
	defer f.Close()
	dir, depth, running := s.dir, s.depth, s.running
	s.dir, s.depth, s.running = filepath.Dir(path), s.depth+1, append(slices.Clip(s.running), abs)
	defer func() { s.dir, s.depth, s.running = dir, depth, running }()
	st := s.script(ctx, path, f)
	st.exit = false // exit in a loaded script ends that script only
	return st
}

// OpenScript opens the script file at path for reading; a directory is
// refused with an error that says so.
func OpenScript(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory; give a script file", path)
	}
	return f, nil
}
