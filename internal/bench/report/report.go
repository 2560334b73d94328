package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn/internal/bench/result"
)

// DefaultTitle is the page title when Options.Title is empty.
const DefaultTitle = "Cairn benchmark results"

// ErrNoInputs is returned by Render and WriteFile when there is no result
// to report.
var ErrNoInputs = errors.New("report: no benchmark results to report")

// Options configures a report.
type Options struct {
	// Title is the page's title and heading. Default DefaultTitle.
	Title string
}

// LoadFiles reads result documents (see package result). An error names the
// file that is missing or is not a result document.
func LoadFiles(paths []string) ([]Input, error) {
	inputs := make([]Input, 0, len(paths))
	for _, p := range paths {
		r, err := result.Load(p)
		if err != nil {
			// result.Load's errors already name the file.
			return nil, fmt.Errorf("report: %w", err)
		}
		inputs = append(inputs, Input{Path: p, Run: r})
	}
	return inputs, nil
}

// Render writes the report for inputs as one self-contained HTML page. The
// page is a function of the inputs alone: the same inputs, in any order,
// give the same bytes.
func Render(w io.Writer, inputs []Input, opts Options) error {
	if len(inputs) == 0 {
		return ErrNoInputs
	}
	for _, in := range inputs {
		if in.Run == nil {
			return fmt.Errorf("report: %s: no result", in.Path)
		}
	}
	title := opts.Title
	if title == "" {
		title = DefaultTitle
	}
	pg, err := buildPage(inputs, title)
	if err != nil {
		return err
	}
	if err := pageTemplate.Execute(w, pg); err != nil {
		return fmt.Errorf("report: render: %w", err)
	}
	return nil
}

// WriteFile renders the report to path. It writes a temporary file in the
// same directory and renames it into place, so path is never left half
// written.
func WriteFile(path string, inputs []Input, opts Options) error {
	var buf bytes.Buffer
	if err := Render(&buf, inputs, opts); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("report: cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("report: cannot write %s: %w", path, err)
	}
	return nil
}
