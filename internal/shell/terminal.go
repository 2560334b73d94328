package shell

import (
	"bufio"
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
// when the user leaves (Ctrl-D).
type LineReader interface {
	ReadLine() (string, error)
}

// RunInteractive reads commands from lr until exit, quit or io.EOF, runs
// each, and reports failures without stopping. It returns 0, or 1 if lr
// fails.
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
// up-arrow history kept in historyPath (best effort; "" keeps none). The
// terminal is raw only while a line is read; Ctrl-C during a command
// cancels that command.
func (s *Shell) RunTerminal(ctx context.Context, in *os.File, historyPath string) int {
	s.hist.open(historyPath)
	defer s.hist.close()
	fd := int(in.Fd())
	t := term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, s.Out}, Prompt)
	t.History = historyView{&s.hist}
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
	fmt.Fprintln(s.Out, "Cairn admin shell. Type help for the commands, exit or Ctrl-D to leave.")
	return s.interactive(ctx, &termReader{fd: fd, t: t}, func(ctx context.Context) (context.Context, context.CancelFunc) {
		return signal.NotifyContext(ctx, os.Interrupt)
	})
}

// termReader reads one line at a time in raw mode.
type termReader struct {
	fd int
	t  *term.Terminal
}

func (r *termReader) ReadLine() (string, error) {
	old, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", err
	}
	defer func() { _ = term.Restore(r.fd, old) }()
	if w, h, err := term.GetSize(r.fd); err == nil && w > 0 && h > 0 {
		_ = r.t.SetSize(w, h)
	}
	return r.t.ReadLine()
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

// add records a line, skipping a repeat of the last one.
func (h *history) add(line string) {
	if n := len(h.lines); n > 0 && h.lines[n-1] == line {
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
