//go:build linux

package report

import (
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/internal/chromiumtest"
)

// Screenshot size, in CSS pixels at device scale factor 1.
const shotW, shotH = 1280, 2400

// The browser, from chromiumtest.
var (
	artifactDir     = chromiumtest.ArtifactDir
	requireChromium = chromiumtest.Require
	runChromium     = chromiumtest.Run
)

func fileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: path}).String()
}

func TestReportRendersInChromium(t *testing.T) {
	requireChromium(t)
	dir := artifactDir(t)
	page := filepath.Join(dir, "report.html")
	shot := filepath.Join(dir, "report.png")
	inputs := fixture(t)
	if err := WriteFile(page, inputs, Options{Title: "Cairn YCSB: workloads A and B"}); err != nil {
		t.Fatal(err)
	}
	// The load phase, at the top of the page, draws each run in its colour,
	// as a filled bar and as lines.
	phases, err := prepare(inputs)
	if err != nil {
		t.Fatal(err)
	}
	var colors []string
	for _, r := range phases[0].runs {
		colors = append(colors, r.color)
	}
	t.Logf("report: %s", page)
	u := fileURL(page)

	// (1) The browser's DOM holds every chart, each with drawn marks.
	dom := runChromium(t, "--dump-dom", u)
	doc := parseHTML(t, dom)
	charts := findAll(doc, isChart)
	if len(charts) != fixtureCharts {
		t.Fatalf("chromium's DOM has %d charts, want %d", len(charts), fixtureCharts)
	}
	for _, c := range charts {
		if len(findAll(c, isMark)) == 0 {
			t.Errorf("chart %q has no drawn marks in chromium's DOM", title(c))
		}
	}

	// (2) The screenshot decodes, has the window's size, and is not blank.
	runChromium(t, "--screenshot="+shot, "--window-size=1280,2400", u)
	t.Logf("screenshot: %s", shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != shotW || b.Dy() != shotH {
		t.Fatalf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), shotW, shotH)
	}
	st := pixelStats(img, colors)
	t.Logf("screenshot: %d distinct colours, %.1f%% not background, pixels of %v: %v", st.distinct, 100*st.inked, colors, st.colors)
	if st.distinct < 400 {
		t.Errorf("screenshot has %d distinct colours; a page of charts and text has far more", st.distinct)
	}
	if st.inked < 0.04 {
		t.Errorf("only %.2f%% of the screenshot differs from the background", 100*st.inked)
	}
	// Each load run's lines (and the bars, in the first run's colour) cover
	// over 10,000 pixels of its colour; the table dots and accents in those
	// colours, without the charts (checked by hiding them), under 2,000.
	for i, c := range colors {
		if want := 8000; st.colors[i] < want {
			t.Errorf("load run colour %s covers %d pixels, want at least %d: the charts did not render",
				c, st.colors[i], want)
		}
	}
}

type stats struct {
	distinct int
	inked    float64 // fraction of pixels that are not page or card background
	colors   []int   // pixels of each of the colours asked about
}

// pixelStats counts img's distinct colours, its pixels that are not
// background, and its pixels of each of colors ("#RRGGBB").
func pixelStats(img image.Image, colors []string) stats {
	b := img.Bounds()
	seen := map[color.RGBA]bool{}
	pal := make([]color.RGBA, len(colors))
	for i, p := range colors {
		pal[i] = hexColor(p)
	}
	st := stats{colors: make([]int, len(colors))}
	inked := 0
	bg := []color.RGBA{hexColor("#FFFFFF"), hexColor("#F5F6F8")}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			if !near(c, bg[0], 4) && !near(c, bg[1], 4) {
				inked++
			}
			for i, p := range pal {
				if near(c, p, 6) {
					st.colors[i]++
				}
			}
		}
	}
	st.distinct = len(seen)
	st.inked = float64(inked) / float64(b.Dx()*b.Dy())
	return st
}

func hexColor(s string) color.RGBA {
	var c color.RGBA
	c.A = 255
	for i, p := range []*uint8{&c.R, &c.G, &c.B} {
		var v uint8
		for _, ch := range s[1+2*i : 3+2*i] {
			v <<= 4
			switch {
			case ch >= '0' && ch <= '9':
				v |= uint8(ch - '0')
			case ch >= 'a' && ch <= 'f':
				v |= uint8(ch-'a') + 10
			case ch >= 'A' && ch <= 'F':
				v |= uint8(ch-'A') + 10
			}
		}
		*p = v
	}
	return c
}

func near(a, b color.RGBA, tol int) bool {
	d := func(x, y uint8) bool { return int(x)-int(y) <= tol && int(y)-int(x) <= tol }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}
