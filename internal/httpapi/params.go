package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/cairndb/cairn/client"
	"github.com/cairndb/cairn/internal/cli"
)

// params reads a request's query, the same words as `cairn kv`'s flags
// (internal/cli), without their dashes.
type params struct{ q url.Values }

// asBadRequest turns a flag-parsing error of internal/cli into a request
// error named by its query parameter.
func asBadRequest(err error) error {
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		return &badRequest{cliFlag.ReplaceAllStringFunc(ue.Error(), func(f string) string {
			return strings.ReplaceAll(f[2:], "-", "_") // --start-exclusive: the parameter start_exclusive
		})}
	}
	return err
}

// cliFlag is a command-line flag named in a cli message.
var cliFlag = regexp.MustCompile(`--[a-z][a-z-]*`)

// options returns the client options the query asks for: timeout,
// consistency (reads), durability, ack and ttl (writes).
func (p params) options(write bool) ([]client.Option, error) {
	var opts []client.Option
	if s := p.q.Get("timeout"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, badRequestf("timeout: %q is not a positive duration like 5s", s)
		}
		opts = append(opts, client.WithTimeout(d))
	}
	if err := p.misplaced(write); err != nil {
		return nil, err
	}
	if !write {
		if s := p.q.Get("consistency"); s != "" {
			c, err := cli.ParseConsistency(s)
			if err != nil {
				return nil, asBadRequest(err)
			}
			opts = append(opts, client.WithConsistency(c))
		}
		return opts, nil
	}
	if p.q.Has("durability") || p.q.Has("ack") {
		d, err := cli.ParseDurability(p.q.Get("durability"), p.q.Get("ack"))
		if err != nil {
			return nil, asBadRequest(err)
		}
		opts = append(opts, client.WithDurability(d))
	}
	if s := p.q.Get("ttl"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return nil, badRequestf("ttl: %q is not a duration like 1h30m (0: never expires)", s)
		}
		opts = append(opts, client.WithTTL(d))
	}
	return opts, nil
}

// misplaced refuses a parameter of writes on a read and one of reads on a
// write, rather than ignoring it.
func (p params) misplaced(write bool) error {
	names := []string{"durability", "ack", "ttl"}
	what := "a read takes no %s (it is a write's parameter)"
	if write {
		names, what = []string{"consistency"}, "a write takes no %s (it is a read's parameter; writes go to the leader)"
	}
	for _, n := range names {
		if p.q.Has(n) {
			return badRequestf("%s: "+what, n, n)
		}
	}
	return nil
}

// noTTL refuses ttl on a delete.
func (p params) noTTL() error {
	if p.q.Has("ttl") {
		return badRequestf("ttl: a delete takes no ttl (it is a put's parameter)")
	}
	return nil
}

// condition reads ?if=: absent, present or version=HEX ("" when absent).
func (p params) condition(forDelete bool) (cond string, match client.Version, err error) {
	s := p.q.Get("if")
	name, arg, hasArg := strings.Cut(s, "=")
	switch {
	case s == "":
		return "", nil, nil
	case name == "version" && hasArg:
		v, err := client.ParseVersion(arg)
		if err != nil {
			return "", nil, badRequestf("if: version=%q is not a hex version (as a put returns it)", arg)
		}
		return "version", v, nil
	case !forDelete && (s == "absent" || s == "present"):
		return s, nil, nil
	}
	if forDelete {
		return "", nil, badRequestf("if: %q is not a delete condition (want version=HEX)", s)
	}
	return "", nil, badRequestf("if: %q is not a put condition (want absent, present or version=HEX)", s)
}

// selection reads a multi-key operation's depth and range: ?depth=,
// ?start=, ?end=, ?prefix=, ?start_exclusive=, ?end_exclusive=.
func (p params) selection() (*client.KeyRange, client.Depth, error) {
	d, err := cli.ParseDepth(p.q.Get("depth"))
	if err != nil {
		return nil, 0, asBadRequest(err)
	}
	f := cli.RangeFlags{Start: p.q.Get("start"), End: p.q.Get("end"), Prefix: p.q.Get("prefix"),
		HasStart: p.q.Has("start"), HasEnd: p.q.Has("end"), HasPrefix: p.q.Has("prefix")}
	if f.StartExclusive, err = p.flag("start_exclusive"); err != nil {
		return nil, 0, err
	}
	if f.EndExclusive, err = p.flag("end_exclusive"); err != nil {
		return nil, 0, err
	}
	r, err := f.Range()
	return r, d, asBadRequest(err)
}

// flag reads a boolean parameter: absent is false, present with no value
// is true.
func (p params) flag(name string) (bool, error) {
	if !p.q.Has(name) {
		return false, nil
	}
	s := p.q.Get(name)
	if s == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequestf("%s: %q is not true or false", name, s)
	}
	return b, nil
}

// keyOf reads the key in r's path after prefix ("/v1/kv"): its string form,
// escapes and all, exactly as the request line sent it. (net/url's
// EscapedPath would rebuild the path from its decoded form when the raw
// path holds a byte it would have escaped, such as '|', and so turn %2F
// inside a component into a separator.)
func keyOf(r *http.Request, prefix string) (client.Key, error) {
	raw := requestPath(r)
	rest, ok := strings.CutPrefix(raw, prefix+"/")
	if !ok {
		return client.Key{}, &client.Error{Code: codes.InvalidArgument, Kind: client.KindMalformedKey, Action: client.ActionFixInput,
			Msg: fmt.Sprintf("the path %q does not start with %s/ as written (escape only the key's components)", raw, prefix)}
	}
	if rest == "" {
		return client.Key{}, &client.Error{Code: codes.InvalidArgument, Kind: client.KindMalformedKey, Action: client.ActionFixInput,
			Msg: fmt.Sprintf("the path names no key: give one after %s/, like %s/users/alice/-/email", prefix, prefix)}
	}
	return client.ParseKey("/" + rest)
}

// requestPath is the path of r's request line as sent, before any '?': for
// the absolute form (http://host/path) the part after the host.
func requestPath(r *http.Request) string {
	s := r.RequestURI
	if s == "" { // a request built in-process, not read from a connection
		return r.URL.EscapedPath()
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i]
	}
	if !strings.HasPrefix(s, "/") {
		if i := strings.Index(s, "://"); i >= 0 {
			if j := strings.IndexByte(s[i+3:], '/'); j >= 0 {
				return s[i+3+j:]
			}
		}
		return r.URL.EscapedPath()
	}
	return s
}

// checkQuery refuses a query that net/url cannot read whole: a malformed
// escape (a '%' not followed by two hex digits) or a ';' between
// parameters. url.Values would drop the parameter that holds it without a
// word, so that PUT ?if=absent%zz would write unconditionally. (A
// malformed escape in the path never gets here: net/http refuses the
// request line itself; see the package doc.)
func checkQuery(r *http.Request) error {
	_, err := url.ParseQuery(r.URL.RawQuery)
	var esc url.EscapeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &esc):
		return badRequestf("the query holds a malformed escape %q: a '%%' starts an escape of two hex digits (write '%%' itself as %%25)", string(esc))
	}
	return badRequestf("the query %q cannot be read: %v (separate parameters with '&')", r.URL.RawQuery, err)
}

// keyRequest reads what every request about one key (or parent) starts
// with: its query, the key in the path after prefix, and the options.
func keyRequest(r *http.Request, prefix string, write bool) (params, client.Key, []client.Option, error) {
	p := params{r.URL.Query()}
	k, err := keyOf(r, prefix)
	if err != nil {
		return p, k, nil, err
	}
	opts, err := p.options(write)
	return p, k, opts, err
}
