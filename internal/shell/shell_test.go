package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin"
)

// call is one request the fake admin received.
type call struct {
	command string
	args    map[string]string
}

// fakeAdmin is a Caller that records requests and answers with a function.
// Without one it answers every command with text "ok COMMAND" and JSON
// {"command": COMMAND}.
type fakeAdmin struct {
	calls  []call
	answer func(n int, command string, args map[string]string) (*cairnpb.AdminReply, error)
}

func (f *fakeAdmin) Call(ctx context.Context, command string, args map[string]string) (*cairnpb.AdminReply, error) {
	f.calls = append(f.calls, call{command, maps.Clone(args)})
	if f.answer != nil {
		return f.answer(len(f.calls), command, args)
	}
	return &cairnpb.AdminReply{Text: "ok " + command, Json: []byte(fmt.Sprintf(`{"command":%q}`, command))}, nil
}

func (f *fakeAdmin) commands() []string {
	var cs []string
	for _, c := range f.calls {
		cs = append(cs, c.command)
	}
	return cs
}

// newShell returns a Shell over fake with captured output.
func newShell(fake *fakeAdmin) (*Shell, *bytes.Buffer, *bytes.Buffer) {
	var out, errw bytes.Buffer
	return &Shell{Caller: fake, Out: &out, Err: &errw, RetryEvery: time.Millisecond}, &out, &errw
}

func unreachable() error {
	return fmt.Errorf("%w: tried 127.0.0.1:5000 (connection refused)", admin.ErrUnreachable)
}

func TestRunCommand(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		words   []string
		answer  func(int, string, map[string]string) (*cairnpb.AdminReply, error)
		code    int
		out     string // Out contains
		errOut  string // Err contains ("" = Err is empty)
		noCalls bool
	}{
		{name: "ok", words: []string{"show", "topology"}, out: "ok show topology\n"},
		{name: "two dashes", words: []string{"plan", "deploy-zone", "--name", "dc1", "--rf=3"}, out: "ok plan deploy-zone"},
		{name: "unknown command", words: []string{"shwo", "topology"}, code: ExitUsage,
			errOut: `Error: unknown command "shwo topology"; type help (did you mean show topology?)`, noCalls: true},
		{name: "unknown option", words: []string{"show", "topology", "-bogus"}, code: ExitUsage,
			errOut: "Error: show topology: unknown option -bogus", noCalls: true},
		{name: "missing required", words: []string{"configure"}, code: ExitUsage,
			errOut: "Error: configure: -name is required", noCalls: true},
		{name: "missing value", words: []string{"configure", "-name"}, code: ExitUsage,
			errOut: "Error: configure: -name needs a value", noCalls: true},
		{name: "partial", words: []string{"snapshot"}, code: ExitUsage,
			errOut: "snapshot create -name NAME", noCalls: true},
		{name: "failed", words: []string{"plan", "cancel", "-id", "3"}, code: ExitFailed,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return nil, grpcstatus.Error(codes.FailedPrecondition, "plan 3 is running; interrupt it first")
			},
			errOut: "Error: plan 3 is running; interrupt it first\n"},
		{name: "rejected by admin", words: []string{"plan", "deploy-admin", "-sn", "snX"}, code: ExitUsage,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return nil, grpcstatus.Error(codes.InvalidArgument, `-sn: "snX" is not a storage node id`)
			},
			errOut: `Error: -sn: "snX" is not a storage node id`},
		{name: "unreachable", words: []string{"ping"}, code: ExitUnreachable,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) { return nil, unreachable() },
			errOut: "Error: admin: no storage node answered"},
		{name: "no admin leader", words: []string{"show", "plans"}, code: ExitUnreachable,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return nil, grpcstatus.Error(codes.Unavailable, "admin: no admin leader is elected; retry")
			},
			errOut: "Error: admin: no admin leader is elected; retry"},
		{name: "timed out", words: []string{"show", "plans"}, code: ExitUnreachable,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return nil, grpcstatus.Error(codes.DeadlineExceeded, "context deadline exceeded")
			},
			errOut: "Error: the admin did not answer in time"},
		{name: "problems", words: []string{"verify", "configuration"}, code: ExitFailed,
			answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return &cairnpb.AdminReply{Text: "Violation: shard 2 has 1 replica, wants 3", Problems: true}, nil
			},
			out: "Violation: shard 2 has 1 replica, wants 3\n"},
		{name: "exit", words: []string{"exit"}, noCalls: true},
		{name: "help", words: []string{"help", "plan", "deploy-zone"}, out: "Usage: plan deploy-zone -name NAME -rf N", noCalls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeAdmin{answer: tc.answer}
			sh, out, errw := newShell(fake)
			if code := sh.RunCommand(ctx, tc.words); code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, errw)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("stdout %q, want it to contain %q", out, tc.out)
			}
			if (tc.errOut == "") != (errw.Len() == 0) || !strings.Contains(errw.String(), tc.errOut) {
				t.Errorf("stderr %q, want it to contain %q", errw, tc.errOut)
			}
			if tc.noCalls && len(fake.calls) > 0 {
				t.Errorf("sent %v, want nothing sent", fake.calls)
			}
		})
	}
}

func TestArgsSent(t *testing.T) {
	fake := &fakeAdmin{}
	sh, _, errw := newShell(fake)
	words, _ := Tokenize(`plan deploy-sn --zn=zn1 -host "node 1" --port 5001 -noexecute`)
	if code := sh.RunCommand(context.Background(), words); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errw)
	}
	want := call{"plan deploy-sn", map[string]string{"zn": "zn1", "host": "node 1", "port": "5001", "noexecute": "true"}}
	if len(fake.calls) != 1 || fake.calls[0].command != want.command || !maps.Equal(fake.calls[0].args, want.args) {
		t.Errorf("sent %v, want %v", fake.calls, want)
	}
}

func TestJSON(t *testing.T) {
	ctx := context.Background()
	fake := &fakeAdmin{answer: func(n int, command string, _ map[string]string) (*cairnpb.AdminReply, error) {
		switch command {
		case "show zones":
			return &cairnpb.AdminReply{Text: "zn1 dc1", Json: []byte(`{"zones":[{"id":1,"name":"dc1"}]}`)}, nil
		case "verify configuration":
			return &cairnpb.AdminReply{Text: "bad", Json: []byte(`{"violations":["x"]}`), Problems: true}, nil
		}
		return nil, grpcstatus.Error(codes.FailedPrecondition, "no such snapshot")
	}}
	sh, out, errw := newShell(fake)
	sh.JSON = true

	if code := sh.RunCommand(ctx, []string{"show", "zones"}); code != ExitOK {
		t.Fatalf("show zones: exit %d", code)
	}
	want := "{\n  \"zones\": [\n    {\n      \"id\": 1,\n      \"name\": \"dc1\"\n    }\n  ]\n}\n"
	if out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}

	out.Reset()
	if code := sh.RunCommand(ctx, []string{"snapshot", "remove", "-name", "s1"}); code != ExitFailed {
		t.Errorf("snapshot remove: exit %d, want 1", code)
	}
	var doc map[string]string
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc["error"] != "no such snapshot" {
		t.Errorf("stdout %q (%v), want {\"error\": \"no such snapshot\"}", out, err)
	}

	out.Reset()
	if code := sh.RunCommand(ctx, []string{"verify", "configuration"}); code != ExitFailed {
		t.Errorf("verify: exit %d, want 1", code)
	}
	if !json.Valid(out.Bytes()) || !strings.Contains(out.String(), `"violations"`) {
		t.Errorf("verify: stdout %q, want its one JSON document", out)
	}

	out.Reset()
	if code := sh.RunCommand(ctx, []string{"show", "zones", "-x"}); code != ExitUsage {
		t.Errorf("usage error: exit %d, want 2", code)
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || !strings.Contains(doc["error"], "unknown option -x") {
		t.Errorf("stdout %q, want an error document", out)
	}
	if errw.Len() != 0 {
		t.Errorf("stderr %q, want nothing in JSON mode", errw)
	}
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScriptStopsAtFirstFailure(t *testing.T) {
	fake := &fakeAdmin{answer: func(n int, command string, _ map[string]string) (*cairnpb.AdminReply, error) {
		if command == "pool create" {
			return nil, grpcstatus.Error(codes.AlreadyExists, `pool "p" exists`)
		}
		return &cairnpb.AdminReply{Text: "done " + command}, nil
	}}
	sh, out, errw := newShell(fake)
	script := writeFile(t, filepath.Join(t.TempDir(), "setup.kvs"), `# a comment
configure -name kvstore

   # an indented comment
show zones
pool create -name p
show topology
`)
	if code := sh.RunFile(context.Background(), script); code != ExitFailed {
		t.Errorf("exit %d, want 1", code)
	}
	if got, want := fake.commands(), []string{"configure", "show zones", "pool create"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	wantOut := "kv-> configure -name kvstore\ndone configure\nkv-> show zones\ndone show zones\nkv-> pool create -name p\n"
	if out.String() != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, wantOut)
	}
	if want := fmt.Sprintf("Error: %s:6: pool \"p\" exists\n", script); errw.String() != want {
		t.Errorf("stderr %q, want %q", errw, want)
	}
}

func TestScriptUsageError(t *testing.T) {
	fake := &fakeAdmin{}
	sh, _, errw := newShell(fake)
	code := sh.RunScript(context.Background(), "stdin", strings.NewReader("show zones\nplan deploy-zone -name x\nping\n"))
	if code != ExitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errw.String(), "Error: stdin:2: plan deploy-zone: -rf is required") {
		t.Errorf("stderr %q", errw)
	}
	if len(fake.calls) != 1 {
		t.Errorf("sent %v, want only show zones", fake.calls)
	}
}

func TestScriptProblems(t *testing.T) {
	fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
		return &cairnpb.AdminReply{Text: "1 violation", Problems: true}, nil
	}}
	sh, out, errw := newShell(fake)
	code := sh.RunScript(context.Background(), "check.kvs", strings.NewReader("verify configuration\nping\n"))
	if code != ExitFailed || len(fake.calls) != 1 {
		t.Errorf("exit %d after %v, want 1 after one command", code, fake.calls)
	}
	if !strings.Contains(out.String(), "1 violation") || !strings.Contains(errw.String(), "Error: check.kvs:1: verify configuration found problems") {
		t.Errorf("stdout %q stderr %q", out, errw)
	}
}

func TestStdin(t *testing.T) {
	fake := &fakeAdmin{}
	sh, out, errw := newShell(fake)
	sh.In = strings.NewReader("\ufeffshow zones\r\n\n# done\nshow pools\nexit\nping\n")
	if code := sh.RunStdin(context.Background()); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errw)
	}
	if got, want := fake.commands(), []string{"show zones", "show pools"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q (exit stops the script)", got, want)
	}
	if want := "kv-> show zones\nok show zones\nkv-> show pools\nok show pools\nkv-> exit\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}

func TestScriptJSONNoEcho(t *testing.T) {
	fake := &fakeAdmin{}
	sh, out, _ := newShell(fake)
	sh.JSON = true
	if code := sh.RunScript(context.Background(), "s", strings.NewReader("show zones\nshow pools\n")); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	dec := json.NewDecoder(out)
	for _, want := range []string{"show zones", "show pools"} {
		var doc map[string]string
		if err := dec.Decode(&doc); err != nil || doc["command"] != want {
			t.Errorf("document %v (%v), want command %q", doc, err, want)
		}
	}
	if dec.More() {
		t.Errorf("more output than one document per command")
	}
}

func TestLoadNested(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "main.kvs"), "configure -name s\nload -file sub/zones.kvs\nshow zones\n")
	writeFile(t, filepath.Join(dir, "sub", "zones.kvs"), "# zones\nplan deploy-zone -name dc1 -rf 1\nload --file=more.kvs\n")
	writeFile(t, filepath.Join(dir, "sub", "more.kvs"), "plan deploy-zone -name dc2 -rf 1\n")

	fake := &fakeAdmin{}
	sh, out, errw := newShell(fake)
	// At the top a relative path is taken from the working directory.
	if code := sh.RunCommand(context.Background(), []string{"load", "-file", filepath.Join(dir, "main.kvs")}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errw)
	}
	want := []string{"configure", "plan deploy-zone", "plan deploy-zone", "show zones"}
	if got := fake.commands(); !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
	if !strings.Contains(out.String(), "kv-> load --file=more.kvs\nkv-> plan deploy-zone -name dc2 -rf 1\n") {
		t.Errorf("stdout %q: nested commands not echoed", out)
	}

	// A failure deep down names every file and line on the way.
	writeFile(t, filepath.Join(dir, "sub", "more.kvs"), "\nbogus command\n")
	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunFile(context.Background(), filepath.Join(dir, "main.kvs")); code != ExitUsage {
		t.Errorf("exit %d, want 2", code)
	}
	wantErr := fmt.Sprintf(`Error: %s:2: %s:3: %s:2: unknown command "bogus command"`,
		filepath.Join(dir, "main.kvs"), filepath.Join(dir, "sub", "zones.kvs"), filepath.Join(dir, "sub", "more.kvs"))
	if !strings.HasPrefix(errw.String(), wantErr) {
		t.Errorf("stderr %q, want %q...", errw, wantErr)
	}
}

func TestLoadLimits(t *testing.T) {
	dir := t.TempDir()
	// A script that loads itself, or two that load each other, fail at
	// once, each location named once.
	self := writeFile(t, filepath.Join(dir, "self.kvs"), "# me\n\nload -file self.kvs\n")
	sh, _, errw := newShell(&fakeAdmin{})
	if code := sh.RunFile(context.Background(), self); code != ExitUsage {
		t.Errorf("self-load: exit %d, want 2", code)
	}
	if want := fmt.Sprintf("Error: %s:3: load: %s is running already: a script that loads itself, directly or through others, never ends\n", self, self); errw.String() != want {
		t.Errorf("self-load: stderr %q, want %q", errw, want)
	}
	a := writeFile(t, filepath.Join(dir, "a.kvs"), "load -file b.kvs\n")
	b := writeFile(t, filepath.Join(dir, "b.kvs"), "ping\nload -file a.kvs\n")
	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunFile(context.Background(), a); code != ExitUsage {
		t.Errorf("a loads b loads a: exit %d, want 2", code)
	}
	if want := fmt.Sprintf("Error: %s:1: %s:2: load: %s is running already", a, b, a); !strings.HasPrefix(errw.String(), want) {
		t.Errorf("a loads b loads a: stderr %q, want %q...", errw, want)
	}
	// Loading one script twice in a row is no loop.
	twice := writeFile(t, filepath.Join(dir, "twice.kvs"), "load -file sub/x.kvs\nload -file sub/x.kvs\n")
	writeFile(t, filepath.Join(dir, "sub", "x.kvs"), "ping\n")
	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunFile(context.Background(), twice); code != ExitOK {
		t.Errorf("a script loaded twice: exit %d: %s", code, errw)
	}

	// Nesting deeper than MaxLoadDepth without a loop.
	for i := range MaxLoadDepth + 1 {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d.kvs", i)), fmt.Sprintf("load -file d%d.kvs\n", i+1))
	}
	writeFile(t, filepath.Join(dir, fmt.Sprintf("d%d.kvs", MaxLoadDepth+1)), "ping\n")
	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunFile(context.Background(), filepath.Join(dir, "d0.kvs")); code != ExitUsage || !strings.Contains(errw.String(), "nested more than 10 deep") {
		t.Errorf("deep nesting: exit %d, stderr %q", code, errw)
	}

	// A directory, and a line over 1 MiB: usage errors that say which.
	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunCommand(context.Background(), []string{"load", "-file", dir}); code != ExitUsage || !strings.Contains(errw.String(), "Error: load: "+dir+" is a directory; give a script file") {
		t.Errorf("load a directory: exit %d, stderr %q", code, errw)
	}
	long := writeFile(t, filepath.Join(dir, "long.kvs"), "ping\nshow topology "+strings.Repeat("x", 1<<20)+"\nping\n")
	fake := &fakeAdmin{}
	sh, _, errw = newShell(fake)
	if code := sh.RunFile(context.Background(), long); code != ExitUsage || len(fake.calls) != 1 {
		t.Errorf("a line over 1 MiB: exit %d after %d commands, want 2 after 1", code, len(fake.calls))
	}
	if want := fmt.Sprintf("Error: %s:2: the line is longer than 1048576 bytes (1 MiB), the most a script line may hold\n", long); errw.String() != want {
		t.Errorf("a line over 1 MiB: stderr %q, want %q", errw, want)
	}

	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunCommand(context.Background(), []string{"load", "-file", filepath.Join(dir, "missing.kvs")}); code != ExitUsage {
		t.Errorf("missing file: exit %d, want 2", code)
	}
	if !strings.Contains(errw.String(), "Error: load: open ") {
		t.Errorf("stderr %q", errw)
	}

	sh, _, errw = newShell(&fakeAdmin{})
	if code := sh.RunCommand(context.Background(), []string{"load"}); code != ExitUsage || !strings.Contains(errw.String(), "-file is required") {
		t.Errorf("load without -file: exit %d, stderr %q", code, errw)
	}
}

func TestHelp(t *testing.T) {
	sh, out, _ := newShell(&fakeAdmin{})
	if code := sh.RunCommand(context.Background(), []string{"help"}); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, c := range admin.Commands {
		if !strings.Contains(out.String(), "  "+c.Usage()+"\n      "+c.Summary+"\n") {
			t.Errorf("help lacks %q with its usage and summary", c.Name)
		}
	}
	for _, c := range localCommands {
		if !strings.Contains(out.String(), c.Name) {
			t.Errorf("help lacks %q", c.Name)
		}
	}

	for _, c := range admin.Commands {
		out.Reset()
		if code := sh.RunCommand(context.Background(), append([]string{"help"}, strings.Fields(c.Name)...)); code != ExitOK {
			t.Errorf("help %s: exit %d", c.Name, code)
		}
		for _, a := range c.AllArgs() {
			if !strings.Contains(out.String(), "-"+a.Name) || !strings.Contains(out.String(), a.Help) {
				t.Errorf("help %s lacks option -%s and its help", c.Name, a.Name)
			}
		}
		if !strings.Contains(out.String(), c.Help) {
			t.Errorf("help %s lacks its long help", c.Name)
		}
	}

	out.Reset()
	if code := sh.RunCommand(context.Background(), []string{"help", "topology"}); code != ExitOK ||
		!strings.Contains(out.String(), "topology create") || strings.Contains(out.String(), "show topology") {
		t.Errorf("help topology: exit %d, %q", code, out)
	}
	if code := sh.RunCommand(context.Background(), []string{"help", "nope"}); code != ExitUsage {
		t.Errorf("help nope: exit %d, want 2", code)
	}
}

// lines is a LineReader over fixed lines, then io.EOF.
type lines []string

func (l *lines) ReadLine() (string, error) {
	if len(*l) == 0 {
		return "", io.EOF
	}
	s := (*l)[0]
	*l = (*l)[1:]
	return s, nil
}

func TestInteractive(t *testing.T) {
	fake := &fakeAdmin{answer: func(n int, command string, _ map[string]string) (*cairnpb.AdminReply, error) {
		if command == "show plans" {
			return nil, grpcstatus.Error(codes.Internal, "boom")
		}
		return &cairnpb.AdminReply{Text: "ok"}, nil
	}}
	sh, out, errw := newShell(fake)
	in := lines{"show plans", "", "bogus", "  ping  ", "history", "quit", "show zones"}
	if code := sh.RunInteractive(context.Background(), &in); code != ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if got, want := fake.commands(), []string{"show plans", "ping"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q: it goes on after failures and stops at quit", got, want)
	}
	if !strings.Contains(errw.String(), "Error: boom\n") || !strings.Contains(errw.String(), `Error: unknown command "bogus"`) {
		t.Errorf("stderr %q", errw)
	}
	if want := "    1  show plans\n    2  bogus\n    3  ping\n    4  history\n"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q, want history %q", out, want)
	}

	in = lines{"ping"}
	if code := sh.RunInteractive(context.Background(), &in); code != ExitOK {
		t.Errorf("Ctrl-D: exit %d, want 0", code)
	}
}

func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hist")
	writeFile(t, path, "show zones\nping\n")
	var h history
	h.open(path)
	h.add("ping") // a repeat of the last line
	h.add("show topology")
	h.close()
	v := historyView{&h}
	if v.Len() != 3 || v.At(0) != "show topology" || v.At(2) != "show zones" {
		t.Errorf("history %q", h.lines)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "show zones\nping\nshow topology\n" {
		t.Errorf("file %q", b)
	}

	var big strings.Builder
	for i := range 2 * maxHistory {
		fmt.Fprintf(&big, "show plan -id %d\n", i)
	}
	writeFile(t, path, big.String())
	h = history{}
	h.open(path)
	h.close()
	b, _ = os.ReadFile(path)
	if len(h.lines) != maxHistory || strings.Count(string(b), "\n") != maxHistory {
		t.Errorf("kept %d lines, file has %d; want %d", len(h.lines), strings.Count(string(b), "\n"), maxHistory)
	}

	// A history that cannot be written is kept in memory.
	h = history{}
	h.open(filepath.Join(path, "not-a-dir", "hist"))
	h.add("ping")
	if len(h.lines) != 1 {
		t.Errorf("history %q", h.lines)
	}
}
