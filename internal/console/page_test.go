package console

import (
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/cairndb/cairn/internal/chromiumtest"
)

// inlineScripts returns the page's script elements: the state block and
// the code.
func inlineScripts(t *testing.T, page string) (state, code string) {
	t.Helper()
	doc := chromiumtest.Parse(t, []byte(page))
	scripts := chromiumtest.FindAll(doc, chromiumtest.IsElem("script"))
	if len(scripts) != 2 {
		t.Fatalf("the page has %d script elements, want 2 (the state and the code)", len(scripts))
	}
	if id, _ := chromiumtest.Attr(scripts[0], "id"); id != "state" {
		t.Fatalf("the first script is %q, want the state block", id)
	}
	return chromiumtest.Text(scripts[0]), chromiumtest.Text(scripts[1])
}

func TestPageCarriesTheStateAsInertJSON(t *testing.T) {
	res, page := get(t, New(whitePaper(), nil), "GET", "/console")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /console: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	// The event text holds "</script><script>...": escaped, it cannot end
	// the state block, so the page keeps exactly its two scripts.
	state, _ := inlineScripts(t, page)
	if strings.Contains(page, "<img src=x") || strings.Contains(page, "</script><script>document") {
		t.Fatal("a store string reached the page as markup")
	}
	var st State
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		t.Fatalf("the state block is not a State: %v", err)
	}
	var events []struct{ Text string }
	if err := json.Unmarshal(st.Events.Data, &events); err != nil || len(events) != 2 || !strings.HasPrefix(events[1].Text, "<img src=x") {
		t.Fatalf("the state block's events: %v %+v", err, events)
	}
	for _, h := range []string{"Cache-Control", "X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy"} {
		if res.Header.Get(h) == "" {
			t.Errorf("GET /console has no %s header", h)
		}
	}
}

func TestCSPNamesThePagesOwnScriptAndStyle(t *testing.T) {
	res, page := get(t, New(whitePaper(), nil), "GET", "/console")
	csp := res.Header.Get("Content-Security-Policy")
	_, code := inlineScripts(t, page)
	doc := chromiumtest.Parse(t, []byte(page))
	styles := chromiumtest.FindAll(doc, chromiumtest.IsElem("style"))
	if len(styles) != 1 {
		t.Fatalf("%d style elements, want 1", len(styles))
	}
	for what, want := range map[string]string{
		"script-src": "script-src '" + cspHash(code) + "'",
		"style-src":  "style-src '" + cspHash(chromiumtest.Text(styles[0])) + "'",
		"nothing":    "default-src 'none'",
		"self":       "connect-src 'self'",
	} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %s: %q", csp, what, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	// Nothing in the page loads from elsewhere.
	for _, n := range chromiumtest.FindAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		for _, a := range []string{"src", "href"} {
			if v, ok := chromiumtest.Attr(n, a); ok && v != "data:," {
				t.Errorf("<%s %s=%q> loads from elsewhere", n.Data, a, v)
			}
		}
	}
}
