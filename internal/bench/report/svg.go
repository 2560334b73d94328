package report

import (
	"html/template"
	"math"
	"strconv"
	"strings"
)

// node is one SVG element. The tree is the only way this package produces
// markup outside html/template: element and attribute names come from this
// package's code, and every attribute value and text is escaped by render,
// so text taken from the inputs cannot break out of it.
type node struct {
	tag   string
	attrs []attr
	text  string
	kids  []*node
}

type attr struct{ name, value string }

// el makes an element; kv are attribute name, value pairs, written in the
// order given (so output is deterministic).
func el(tag string, kv ...string) *node {
	if len(kv)%2 != 0 {
		panic("report: el needs name, value pairs")
	}
	n := &node{tag: tag}
	for i := 0; i < len(kv); i += 2 {
		n.attrs = append(n.attrs, attr{kv[i], kv[i+1]})
	}
	return n
}

// textEl makes an element whose content is the text s.
func textEl(tag, s string, kv ...string) *node {
	n := el(tag, kv...)
	n.text = s
	return n
}

// add appends children and returns n.
func (n *node) add(kids ...*node) *node {
	n.kids = append(n.kids, kids...)
	return n
}

// render writes n and its children as markup.
func (n *node) render(b *strings.Builder) {
	b.WriteByte('<')
	b.WriteString(n.tag)
	for _, a := range n.attrs {
		b.WriteByte(' ')
		b.WriteString(a.name)
		b.WriteString(`="`)
		b.WriteString(template.HTMLEscapeString(a.value))
		b.WriteByte('"')
	}
	if n.text == "" && len(n.kids) == 0 {
		b.WriteString("/>")
		return
	}
	b.WriteByte('>')
	b.WriteString(template.HTMLEscapeString(n.text))
	for _, k := range n.kids {
		k.render(b)
	}
	b.WriteString("</")
	b.WriteString(n.tag)
	b.WriteByte('>')
}

// html renders n for inclusion in the page template.
func (n *node) html() template.HTML {
	var b strings.Builder
	n.render(&b)
	return template.HTML(b.String()) //nolint:gosec // escaped by render
}

// num formats a coordinate with at most one decimal, without "-0".
func num(v float64) string {
	r := math.Round(v*10) / 10
	if r == 0 {
		r = 0 // turns -0 into 0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// pt is a point in SVG user units.
type pt struct{ x, y float64 }

// pathD returns an SVG path through pts: "M x y L x y ...". Points that lie
// on a horizontal or vertical run between their neighbours are dropped, as
// they add nothing to the drawing; an empty pts gives "".
func pathD(pts []pt) string {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 && i < len(pts)-1 {
			prev, next := pts[i-1], pts[i+1]
			if (num(prev.y) == num(p.y) && num(p.y) == num(next.y)) ||
				(num(prev.x) == num(p.x) && num(p.x) == num(next.x)) {
				continue
			}
		}
		if b.Len() == 0 {
			b.WriteString("M")
		} else {
			b.WriteString(" L")
		}
		b.WriteString(num(p.x))
		b.WriteByte(' ')
		b.WriteString(num(p.y))
	}
	return b.String()
}
