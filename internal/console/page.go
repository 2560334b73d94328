package console

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"strings"
)

// The page is console.html with console.css and console.js put inline (so
// it needs nothing from elsewhere) and the first state between head and
// tail:
//
//	<!doctype html> ... <style>console.css</style> ...
//	<script id="state" type="application/json">   ◄── head ends
//	{"node": ..., "ping": ...}                     ◄── the first State, as JSON
//	</script> <script>console.js</script> ...      ◄── tail
var (
	//go:embed console.html
	pageHTML string
	//go:embed console.css
	pageCSS string
	//go:embed console.js
	pageJS string
)

// stateMark is where console.html takes the first state.
const stateMark = "{{STATE}}"

// page is console.html split at stateMark, with the style and the script
// put in.
var page = func() (p struct{ head, tail []byte }) {
	html := strings.NewReplacer("{{STYLE}}", pageCSS, "{{SCRIPT}}", pageJS).Replace(pageHTML)
	head, tail, ok := strings.Cut(html, stateMark)
	if !ok {
		panic("console: console.html has no " + stateMark)
	}
	p.head, p.tail = []byte(head), []byte(tail)
	return p
}()

// pageCSP lets the page run its own script and style (by their hashes),
// fetch from this node only, and load nothing else.
var pageCSP = "default-src 'none'; script-src '" + cspHash(pageJS) + "'; style-src '" + cspHash(pageCSS) +
	"'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func cspHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}
