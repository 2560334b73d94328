package e2e

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/cairndb/cairn/internal/auth"
	"github.com/cairndb/cairn/internal/chromiumtest"
)

// webGet fetches url with hc (nil: a plain client) and, when user is set,
// Basic credentials; it returns the status, headers and body.
func webGet(t *testing.T, hc *http.Client, url, user, pw string) (int, http.Header, string) {
	t.Helper()
	return webDo(t, hc, http.MethodGet, url, "", user, pw)
}

// webPut puts value at url (the HTTP API) with a plain client.
func webPut(t *testing.T, url, value string) (int, http.Header, string) {
	t.Helper()
	return webDo(t, nil, http.MethodPut, url, value, "", "")
}

func webDo(t *testing.T, hc *http.Client, method, url, body, user, pw string) (int, http.Header, string) {
	t.Helper()
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// consoleState is the part of /console/state.json the tests read.
type consoleState struct {
	Node string `json:"node"`
	Ping struct {
		Data struct {
			Store string `json:"store"`
			Nodes []struct {
				SN     int    `json:"sn"`
				Status string `json:"status"`
			} `json:"storage_nodes"`
		} `json:"data"`
		Error string `json:"error"`
	} `json:"ping"`
	Verify, Topology, Plans, Events struct {
		Error string `json:"error"`
	}
}

func readConsoleState(t *testing.T, body string) consoleState {
	t.Helper()
	var st consoleState
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("state.json: %v\n%s", err, body)
	}
	return st
}

// snStatus is sn's status in st's ping ("" when ping has no row for it).
func (st consoleState) snStatus(sn int) string {
	for _, n := range st.Ping.Data.Nodes {
		if n.SN == sn {
			return n.Status
		}
	}
	return ""
}

// consoleDOM loads node's console in headless Chromium and returns the DOM
// it drew.
func consoleDOM(t *testing.T, sn *storageNode) *html.Node {
	t.Helper()
	dom := chromiumtest.Run(t, "--explicitly-allowed-ports="+strconv.Itoa(sn.port), "--dump-dom", "http://"+sn.addr()+"/console")
	return chromiumtest.Parse(t, dom)
}

// tableRows is the text of each body row of table id, keyed by the row's
// attribute attr.
func tableRows(t *testing.T, doc *html.Node, id, attr string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tr := range chromiumtest.FindAll(chromiumtest.ByID(t, doc, id), chromiumtest.IsElem("tr")) {
		if k, ok := chromiumtest.Attr(tr, attr); ok {
			var cells []string
			for _, td := range chromiumtest.FindAll(tr, chromiumtest.IsElem("td")) {
				cells = append(cells, chromiumtest.Text(td))
			}
			out[k] = strings.Join(cells, " | ")
		}
	}
	return out
}

// TestConsoleShowsTheWhitePaperStore: the white paper store's console, as
// headless Chromium draws it from sn2 (a node without an admin, which
// forwards), before and after sn3 is killed.
func TestConsoleShowsTheWhitePaperStore(t *testing.T) {
	chromiumtest.Require(t)
	nodes := initNodes(t, 3)
	for _, sn := range nodes {
		sn.start(t)
	}
	before, deploy, after := whitePaperScript(t, nodes)
	if code, out, errOut := admin(t, nodes[0], "-script", writeScript(t, append(append(before, deploy...), after...))); code != 0 {
		t.Fatalf("white paper script: exit %d\n%s\n%s", code, out, errOut)
	}
	sn2 := nodes[1]

	doc := consoleDOM(t, sn2)
	if got := chromiumtest.Text(chromiumtest.ByID(t, doc, "store")); got != "kvstore" {
		t.Errorf("the console names the store %q, want kvstore", got)
	}
	sns := tableRows(t, doc, "nodes", "data-sn")
	for i, sn := range nodes {
		row := sns[strconv.Itoa(i+1)]
		if !strings.Contains(row, sn.addr()) || !strings.Contains(row, "| RUNNING |") {
			t.Errorf("node row sn%d = %q, want its address and RUNNING", i+1, row)
		}
	}
	shards := tableRows(t, doc, "shards", "data-shard")
	if len(shards) != 2 || !strings.HasPrefix(shards["rg1"], "rg1 | healthy | 3 of 3 | 50 |") || !strings.HasPrefix(shards["rg2"], "rg2 | healthy | 3 of 3 | 50 |") {
		t.Errorf("shard rows %q, want rg1 and rg2 healthy, 3 of 3, 50 partitions each", shards)
	}
	plans := tableRows(t, doc, "plans", "data-plan")
	if p := plans["6"]; !strings.HasPrefix(p, "6 | plan deploy-topology -name MyStoreLayout") || !strings.Contains(p, "| SUCCEEDED | 6 of 6 |") {
		t.Errorf("plan 6 row %q, want deploy-topology SUCCEEDED (all rows: %q)", p, plans)
	}
	if events := tableRows(t, doc, "events", "data-seq"); len(events) == 0 {
		t.Error("the console shows no events")
	}

	// Each node counts the KV calls it serves and how long they took, for
	// the console's requests per second and latency: ping -json carries
	// the counts and the histograms.
	if code, _, body := webPut(t, "http://"+sn2.addr()+"/v1/kv/console/-/k", "v"); code != 200 {
		t.Fatalf("PUT through sn2: %d %s", code, body)
	}
	_, out, _ := admin(t, nodes[0], "-json", "ping")
	var ping struct {
		Nodes []struct {
			Requests     uint64 `json:"requests"`
			WriteLatency struct {
				Bounds []int64  `json:"bounds_us"`
				Counts []uint64 `json:"counts"`
			} `json:"write_latency"`
		} `json:"storage_nodes"`
	}
	if err := json.Unmarshal([]byte(out), &ping); err != nil {
		t.Fatalf("ping -json: %v\n%s", err, out)
	}
	var served, timed uint64
	for _, n := range ping.Nodes {
		served += n.Requests
		if len(n.WriteLatency.Counts) != len(n.WriteLatency.Bounds)+1 {
			t.Errorf("ping -json: a write histogram of %d counts for %d bounds", len(n.WriteLatency.Counts), len(n.WriteLatency.Bounds))
		}
		for _, c := range n.WriteLatency.Counts {
			timed += c
		}
	}
	if served == 0 || timed == 0 {
		t.Errorf("ping -json counts %d KV requests and %d timed writes after a PUT: %s", served, timed, out)
	}

	// show perf: the calls of its interval, while PUTs run through sn2
	// until it ends.
	perf := startProc(t, "show perf", "admin", "-host", "127.0.0.1", "-port", strconv.Itoa(nodes[0].port), "-json", "show", "perf", "-seconds", "2")
	puts := 0
	for perf.running() {
		if code, _, body := webPut(t, "http://"+sn2.addr()+"/v1/kv/console/-/perf", "v"); code != 200 {
			t.Fatalf("PUT through sn2: %d %s", code, body)
		}
		puts++
	}
	if code, _ := perf.waitExit(10 * time.Second); code != 0 {
		t.Fatalf("show perf: exit %d\n%s", code, perf.stderr.String())
	}
	var rep struct {
		Store struct {
			Writes struct {
				Count  uint64  `json:"count"`
				PerSec float64 `json:"per_s"`
				P99    int64   `json:"p99_us"`
			} `json:"writes"`
		} `json:"store"`
		Nodes []struct {
			Status string `json:"status"`
		} `json:"storage_nodes"`
	}
	if err := json.Unmarshal([]byte(perf.stdout.String()), &rep); err != nil {
		t.Fatalf("show perf -json: %v\n%s", err, perf.stdout.String())
	}
	if w := rep.Store.Writes; w.Count == 0 || w.Count > uint64(puts) || w.PerSec <= 0 || w.P99 <= 0 || len(rep.Nodes) != 3 {
		t.Errorf("show perf over %d PUTs: %+v, want some of them timed, on 3 nodes", puts, rep)
	}
	t.Logf("show perf: %d of the %d PUTs in its interval, p99 ≤ %d µs", rep.Store.Writes.Count, puts, rep.Store.Writes.P99)

	// sn3 dies: the console's next state says so.
	nodes[2].kill()
	url := "http://" + sn2.addr() + "/console/state.json"
	waitFor(t, 30*time.Second, "the console to report sn3 UNREACHABLE", func() bool {
		code, _, body := webGet(t, nil, url, "", "")
		return code == 200 && readConsoleState(t, body).snStatus(3) == "UNREACHABLE"
	})
	doc = consoleDOM(t, sn2)
	if row := tableRows(t, doc, "nodes", "data-sn")["3"]; !strings.Contains(row, "UNREACHABLE") {
		t.Errorf("after sn3's kill its row is %q, want UNREACHABLE", row)
	}
	reps := tableRows(t, doc, "replicas", "data-replica")
	if !strings.Contains(reps["rg1-rn3"], "UNREACHABLE") || !strings.Contains(reps["rg2-rn3"], "UNREACHABLE") {
		t.Errorf("after sn3's kill its replicas are %q and %q, want UNREACHABLE", reps["rg1-rn3"], reps["rg2-rn3"])
	}
	if shards := tableRows(t, doc, "shards", "data-shard"); !strings.Contains(shards["rg1"], "writable-degraded | 2 of 3") {
		t.Errorf("after sn3's kill rg1 is %q, want writable-degraded, 2 of 3", shards["rg1"])
	}
	if v := chromiumtest.Text(chromiumtest.ByID(t, doc, "verify")); !strings.Contains(v, "sn3") {
		t.Errorf("verify configuration on the console does not name sn3: %q", v)
	}

	// The console is read-only, and other paths under it are not pages.
	for _, m := range []string{http.MethodPost, http.MethodDelete} {
		req, _ := http.NewRequest(m, "http://"+sn2.addr()+"/console", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s /console: %d, want 405", m, resp.StatusCode)
		}
	}
	if code, _, body := webGet(t, nil, "http://"+sn2.addr()+"/console/nope", "", ""); code != 404 || !strings.Contains(body, "/console/state.json") {
		t.Errorf("GET /console/nope: %d %q", code, body)
	}
	// The KV API beside it still answers.
	if code, _, body := webGet(t, nil, "http://"+sn2.addr()+"/v1/store", "", ""); code != 200 || !strings.Contains(body, `"kvstore"`) {
		t.Errorf("GET /v1/store beside the console: %d %s", code, body)
	}
}

// TestLiteHasNoConsole: cairn lite has no admin, and says so at /console.
func TestLiteHasNoConsole(t *testing.T) {
	t.Parallel()
	l := startLite(t, t.TempDir())
	code, _, body := webGet(t, nil, fmt.Sprintf("http://%s/console", l.addr), "", "")
	if code != 404 || !strings.Contains(body, "cairn lite has no admin service") || !strings.Contains(body, "cairn sn") {
		t.Errorf("lite's /console: %d %q, want 404 saying storage nodes serve it", code, body)
	}
}

// checkSecureConsole: on a secure store, the console asks for a login
// (401 with a Basic challenge), takes any user's (viewer is readonly),
// refuses plaintext, and audits the login but not the polls.
func checkSecureConsole(t *testing.T, sn *storageNode, sec string) {
	t.Helper()
	hc, _, pw := httpsLogin(t, filepath.Join(sec, "viewer.security"))
	base := "https://" + sn.addr() + "/console"
	for _, c := range []struct {
		what, user, pw string
	}{{"no credentials", "", ""}, {"a wrong password", "viewer", "not-the-password"}} {
		code, hdr, body := webGet(t, hc, base+"/state.json", c.user, c.pw)
		if code != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), `Basic realm="cairn"`) {
			t.Errorf("secure console, %s: %d, WWW-Authenticate %q, %q; want 401 with a Basic challenge", c.what, code, hdr.Get("WWW-Authenticate"), body)
		}
	}
	for range 3 { // a browser's polls: one login
		code, _, body := webGet(t, hc, base+"/state.json", "viewer", pw)
		if code != 200 {
			t.Fatalf("secure console as viewer (readonly): %d %s", code, body)
		}
		st := readConsoleState(t, body)
		if st.Ping.Data.Store != "kvstore" || st.Ping.Error != "" || st.Verify.Error != "" || st.Plans.Error != "" || st.Events.Error != "" || st.Topology.Error != "" {
			t.Errorf("secure console as viewer: %+v", st)
		}
	}
	if code, hdr, _ := webGet(t, hc, base, "viewer", pw); code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Errorf("secure console page as viewer: %d %s", code, hdr.Get("Content-Type"))
	}
	if code, _, _ := webGet(t, nil, "http://"+sn.addr()+"/console", "viewer", pw); code != http.StatusUpgradeRequired {
		t.Errorf("the console over plaintext on a secure node: %d, want 426", code)
	}
	audit, err := os.ReadFile(filepath.Join(sn.root, "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	logins := 0
	for _, line := range strings.Split(string(audit), "\n") {
		if strings.Contains(line, `"user":"viewer"`) && strings.Contains(line, `"what":"login","outcome":"ok"`) {
			logins++
		}
		if strings.Contains(line, `"user":"viewer"`) && strings.Contains(line, "show events") {
			t.Errorf("a console poll was audited: %s", line)
		}
	}
	if logins != 1 {
		t.Errorf("the audit log has %d logins of viewer, want 1 for four console requests (the token is kept):\n%s", logins, audit)
	}
}

// tlsConfig trusts the store CA of the security directory dir.
func tlsConfig(t *testing.T, dir string) *tls.Config {
	t.Helper()
	tc, err := auth.ClientTLS(filepath.Join(dir, auth.CAFile), "")
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// httpsLogin reads a login file: an HTTPS client that trusts its CA
// (curl --cacert), and its user and password.
func httpsLogin(t *testing.T, file string) (*http.Client, string, string) {
	t.Helper()
	lg, err := auth.ReadLogin(file)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := lg.TLS()
	if err != nil {
		t.Fatal(err)
	}
	pw, err := lg.Password()
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}, lg.User, pw
}
