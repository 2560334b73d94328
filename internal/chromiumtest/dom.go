package chromiumtest

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// Parse parses a page (or a DOM Chromium dumped).
func Parse(t testing.TB, b []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not HTML: %v", err)
	}
	return doc
}

// FindAll returns the nodes under n (inclusive) for which match is true,
// in document order.
func FindAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, FindAll(c, match)...)
	}
	return out
}

// Attr returns n's attribute key.
func Attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// HasClass reports whether n's class list holds class.
func HasClass(n *html.Node, class string) bool {
	v, _ := Attr(n, "class")
	return slices.Contains(strings.Fields(v), class)
}

// IsElem matches the elements named name.
func IsElem(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == name }
}

// Text is the text under n, its text nodes joined.
func Text(n *html.Node) string {
	var b strings.Builder
	for _, t := range FindAll(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data)
	}
	return b.String()
}

// ByID returns the one element with id, failing t if there is not exactly one.
func ByID(t testing.TB, doc *html.Node, id string) *html.Node {
	t.Helper()
	ns := FindAll(doc, func(n *html.Node) bool {
		v, ok := Attr(n, "id")
		return n.Type == html.ElementNode && ok && v == id
	})
	if len(ns) != 1 {
		t.Fatalf("%d elements with id %q, want 1", len(ns), id)
	}
	return ns[0]
}
