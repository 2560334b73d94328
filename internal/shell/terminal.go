package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/term"
)

// LineReader reads the lines typed at the prompt. ReadLine returns io.EOF
// when the user leaves (Ctrl-D on an empty line) and ErrInterrupted when the
// user drops the line being typed (Ctrl-C).
type LineReader interface {
	ReadLine() (string, error)
}

// ErrInterrupted is returned by a LineReader when Ctrl-C dropped the line
// being typed: the shell shows a fresh prompt.
var ErrInterrupted = errors.New("shell: line interrupted")

// RunInteractive reads commands from lr until exit, quit or io.EOF, runs
// each, and reports failures without stopping. A line dropped by Ctrl-C
// (ErrInterrupted) is skipped. It returns 0, or 1 if lr fails.
func (s *Shell) RunInteractive(ctx context.Context, lr LineReader) int {
	return s.interactive(ctx, lr, nil)
}

// interactive is RunInteractive with an optional wrapper of each command's
// context (RunTerminal cancels a command on SIGINT).
func (s *Shell) interactive(ctx context.Context, lr LineReader, perCommand func(context.Context) (context.Context, context.CancelFunc)) int {
	for {
		line, err := lr.ReadLine()
		switch {
		case errors.Is(err, io.EOF):
			fmt.Fprintln(s.Out)
			return ExitOK
		case errors.Is(err, ErrInterrupted):
			continue
		case err != nil && !errors.Is(err, term.ErrPasteIndicator):
			fmt.Fprintf(s.Err, "Error: reading the terminal: %v\n", err)
			return ExitFailed
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s.hist.add(line)
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if perCommand != nil {
			cctx, cancel = perCommand(ctx)
		}
		st := s.execLine(cctx, line)
		cancel()
		s.report(st)
		if st.exit || ctx.Err() != nil {
			return ExitOK
		}
	}
}

// RunTerminal runs the interactive shell on the terminal in: the kv->
// prompt, line editing, Tab completion of command and option names, and
// up-arrow history kept in historyPath (best effort; "" keeps none). It
// first checks that a node answers (see warnUnreachable). The terminal is
// raw only while a line is read. Ctrl-C at the prompt drops the line and
// shows a fresh prompt; Ctrl-C while a command runs cancels that command;
// neither ends the shell. Ctrl-D on an empty line (or exit) does.
func (s *Shell) RunTerminal(ctx context.Context, in *os.File, historyPath string) int {
	s.hist.open(historyPath)
	defer s.hist.close()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt) // from now on SIGINT never ends the process
	defer signal.Stop(sigs)
	fmt.Fprintln(s.Out, "Cairn admin shell. Type help for the commands, exit or Ctrl-D to leave.")
	s.warnUnreachable(ctx)
	lr := newTermLines(in, s.Out, &s.hist)
	lr.fd = int(in.Fd())
	return s.interactive(ctx, lr, func(ctx context.Context) (context.Context, context.CancelFunc) {
		return cancelOnSignal(ctx, sigs)
	})
}

// cancelOnSignal returns a context that is canceled when a signal arrives
// on sigs (one sent before the call is dropped) or when cancel is called.
func cancelOnSignal(ctx context.Context, sigs <-chan os.Signal) (context.Context, context.CancelFunc) {
	for len(sigs) > 0 {
		<-sigs // a Ctrl-C typed between commands
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-cctx.Done():
		}
	}()
	return cctx, cancel
}

// termLines reads lines with term.Terminal's editing, in raw mode when fd
// is a terminal (fd < 0: the caller set the mode, as tests do). Ctrl-C,
// which term.Terminal treats as Ctrl-D, is rewritten by an interruptReader
// so that it ends the line with "^C" shown, and ReadLine returns
// ErrInterrupted for that line.
type termLines struct {
	fd   int
	t    *term.Terminal
	intr *interruptReader
}

// newTermLines returns a termLines reading keys from in and echoing to out,
// with h for the up and down keys and Tab completion of commands.
func newTermLines(in io.Reader, out io.Writer, h *history) *termLines {
	intr := &interruptReader{r: in}
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{intr, out}, Prompt)
	t.History = historyView{h}
	t.AutoCompleteCallback = func(line string, pos int, key rune) (string, int, bool) {
		if key != '\t' {
			return "", 0, false
		}
		done := complete(line[:pos])
		if done == line[:pos] {
			return "", 0, false
		}
		return done + line[pos:], len(done), true
	}
	return &termLines{fd: -1, t: t, intr: intr}
}

// ReadLine reads one line; see termLines.
func (r *termLines) ReadLine() (string, error) {
	if r.fd >= 0 {
		old, err := term.MakeRaw(r.fd)
		if err != nil {
			return "", err
		}
		defer func() { _ = term.Restore(r.fd, old) }()
		if w, h, err := term.GetSize(r.fd); err == nil && w > 0 && h > 0 {
			_ = r.t.SetSize(w, h)
		}
	}
	line, err := r.t.ReadLine()
	if err == nil && strings.HasSuffix(line, interruptMark) && r.intr.take() {
		return "", ErrInterrupted
	}
	return line, err
}

// interruptMark is what a line dropped by Ctrl-C ends with on the screen.
const interruptMark = "^C"

// interruptKeys replace a Ctrl-C byte: Ctrl-E (go to the end of the line),
// the mark, and Enter, so term.Terminal echoes "^C", ends the line and
// returns it, and termLines drops it.
var interruptKeys = []byte("\x05" + interruptMark + "\r")

// interruptReader passes keys through, rewriting each Ctrl-C (0x03) into
// interruptKeys and counting it. Used by one goroutine.
type interruptReader struct {
	r       io.Reader
	pending int    // Ctrl-Cs rewritten and not yet taken
	rest    []byte // rewritten bytes not yet returned
}

func (ir *interruptReader) Read(p []byte) (int, error) {
	if len(ir.rest) == 0 {
		n, err := ir.r.Read(p)
		if n == 0 || bytes.IndexByte(p[:n], 0x03) < 0 {
			return n, err
		}
		for _, b := range p[:n] {
			if b == 0x03 {
				ir.rest = append(ir.rest, interruptKeys...)
				ir.pending++
			} else {
				ir.rest = append(ir.rest, b)
			}
		}
		if err != nil && len(ir.rest) > 0 {
			err = nil // returned again by the next Read
		}
	}
	n := copy(p, ir.rest)
	ir.rest = ir.rest[n:]
	return n, nil
}

// take reports whether a Ctrl-C was rewritten and not yet taken, taking it.
func (ir *interruptReader) take() bool {
	if ir.pending == 0 {
		return false
	}
	ir.pending--
	return true
}

// maxHistory is how many lines the history keeps, in memory and on disk.
const maxHistory = 1000

// history is the session's command lines, oldest first, loaded from and
// appended to a file when one is open.
type history struct {
	lines []string
	f     *os.File // appended to; nil without a file
}

// open loads the last maxHistory lines of path and opens it for appending,
// rewriting it when it has grown to twice that. Failures leave history in
// memory only.
func (h *history) open(path string) {
	if path == "" {
		return
	}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		var all []string
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				all = append(all, l)
			}
		}
		_ = f.Close()
		if len(all) > maxHistory {
			h.lines = append([]string(nil), all[len(all)-maxHistory:]...)
		} else {
			h.lines = all
		}
		if len(all) >= 2*maxHistory {
			_ = os.WriteFile(path, []byte(strings.Join(h.lines, "\n")+"\n"), 0o600)
		}
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
		h.f = f
	}
}

func (h *history) close() {
	if h.f != nil {
		_ = h.f.Close()
		h.f = nil
	}
}

// add records a line, skipping a repeat of the last one, and one that
// carries a password (plan create-user, change-user): neither the session's
// list nor the history file ever holds a password.
func (h *history) add(line string) {
	if n := len(h.lines); n > 0 && h.lines[n-1] == line {
		return
	}
	if strings.Contains(strings.ToLower(line), "password") {
		return
	}
	h.lines = append(h.lines, line)
	if len(h.lines) > maxHistory {
		h.lines = h.lines[len(h.lines)-maxHistory:]
	}
	if h.f != nil {
		_, _ = h.f.WriteString(line + "\n")
	}
}

// print lists the lines, numbered.
func (h *history) print(w io.Writer) {
	for i, l := range h.lines {
		fmt.Fprintf(w, "%5d  %s\n", i+1, l)
	}
}

// historyView shows a history to term.Terminal for the up and down keys.
// Its Add does nothing: the interactive loop records lines itself.
type historyView struct{ h *history }

func (v historyView) Add(string) {}
func (v historyView) Len() int   { return len(v.h.lines) }
func (v historyView) At(i int) string {
	return v.h.lines[len(v.h.lines)-1-i]
}
