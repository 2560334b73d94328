package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
)

// readAll reads lines from lr until an error other than ErrInterrupted,
// writing each line as it came, or "<^C>" for an interrupted one.
func readAll(lr LineReader) ([]string, error) {
	var got []string
	for {
		line, err := lr.ReadLine()
		switch {
		case errors.Is(err, ErrInterrupted):
			got = append(got, "<^C>")
		case err != nil:
			return got, err
		default:
			got = append(got, line)
		}
	}
}

// chunks is a reader that returns its byte slices one Read at a time, as a
// terminal returns keys as they are typed.
type chunks [][]byte

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	if n == len((*c)[0]) {
		*c = (*c)[1:]
	} else {
		(*c)[0] = (*c)[0][n:]
	}
	return n, nil
}

func TestTermLinesCtrlC(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string // one Read each
		want []string
	}{
		{"Ctrl-C drops the line", []string{"show zo", "\x03", "show zones\r", "\x04"}, []string{"<^C>", "show zones"}},
		{"Ctrl-C in one read with other lines", []string{"a\rshow zo\x03b\r\x04"}, []string{"a", "<^C>", "b"}},
		{"Ctrl-C with the cursor mid-line", []string{"show zo\x02\x02\x03", "x\r\x04"}, []string{"<^C>", "x"}},
		{"Ctrl-C on an empty line", []string{"\x03\x03", "\x04"}, []string{"<^C>", "<^C>"}},
		{"a typed ^C is a line", []string{"echo ^C\r\x04"}, []string{"echo ^C"}},
		{"Ctrl-D on a non-empty line does not leave", []string{"ab\x04\r\x04"}, []string{"ab"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in chunks
			for _, k := range tc.keys {
				in = append(in, []byte(k))
			}
			var out bytes.Buffer
			got, err := readAll(newTermLines(&in, &out, &history{}))
			if !errors.Is(err, io.EOF) || !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, %v; want %q then io.EOF", got, err, tc.want)
			}
		})
	}
}

func TestTermLinesEchoesCtrlC(t *testing.T) {
	in := chunks{[]byte("show zo"), []byte("\x03"), []byte("\x04")}
	var out bytes.Buffer
	if _, err := readAll(newTermLines(&in, &out, &history{})); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "show zo^C\r\n"+Prompt) {
		t.Errorf("screen %q; want the dropped line shown with ^C and a fresh prompt", s)
	}
}

// TestInteractiveCtrlC: the shell runs on after a Ctrl-C at the prompt and
// runs the next command; Ctrl-D leaves with 0.
func TestInteractiveCtrlC(t *testing.T) {
	fake := &fakeAdmin{}
	sh, out, errw := newShell(fake)
	in := chunks{[]byte("show zo\x03"), []byte("show zones\r"), []byte("\x04")}
	if code := sh.RunInteractive(context.Background(), newTermLines(&in, io.Discard, &sh.hist)); code != ExitOK {
		t.Fatalf("exit %d; stderr %q", code, errw)
	}
	if got := fake.commands(); !slices.Equal(got, []string{"show zones"}) {
		t.Errorf("commands %q, want only show zones", got)
	}
	if !strings.Contains(out.String(), "ok show zones") {
		t.Errorf("stdout %q", out)
	}
	if !slices.Equal(sh.hist.lines, []string{"show zones"}) {
		t.Errorf("history %q; want the dropped line left out", sh.hist.lines)
	}
}

// TestCancelOnSignal: a signal cancels the running command's context, not
// the shell's; one sent between commands is dropped.
func TestCancelOnSignal(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt // typed between commands
	parent, stopParent := context.WithCancel(context.Background())
	defer stopParent()
	ctx, cancel := cancelOnSignal(parent, sigs)
	defer cancel()
	if ctx.Err() != nil {
		t.Fatal("a signal sent before the command canceled it")
	}
	sigs <- os.Interrupt
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the command's context was not canceled 5s after the signal")
	}
	if parent.Err() != nil {
		t.Error("the signal canceled the shell's context")
	}
}

func TestWarnUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		warn string // "" for no warning
	}{
		{"answers", nil, ""},
		{"no node answers", unreachable(), "Warning: admin: no storage node answered: tried 127.0.0.1:5000 (connection refused)"},
		{"slow admin", context.DeadlineExceeded, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := &fakeAdmin{answer: func(int, string, map[string]string) (*cairnpb.AdminReply, error) {
				return &cairnpb.AdminReply{Text: "pong"}, tc.err
			}}
			sh, out, errw := newShell(fake)
			sh.warnUnreachable(context.Background())
			if !slices.Equal(fake.commands(), []string{"ping"}) || out.Len() != 0 {
				t.Errorf("commands %q, stdout %q; want one ping and no output", fake.commands(), out)
			}
			if got := errw.String(); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("stderr %q, want %q", got, tc.warn)
			}
		})
	}
}

// TestHistoryKeepsNoPassword: a line that carries a password is run but
// never recorded, in the session's list or the history file.
func TestHistoryKeepsNoPassword(t *testing.T) {
	var h history
	h.add("show users")
	h.add("plan create-user -name carol -password s3cret-pass")
	h.add("plan change-user -name carol -set-password -PASSWORD x")
	if !slices.Equal(h.lines, []string{"show users"}) {
		t.Errorf("history %q; want no line with a password", h.lines)
	}
}
