package robustness

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/test/clustertest"
)

// runScenarios runs test's fault scenarios as subtests: choice is the
// scenario flag's value (-flag): one of names, all of them, or random (the
// one that seed picks, from its stream). Each subtest logs the command
// that reruns it.
func runScenarios(t *testing.T, test, flag string, names []string, choice string, stream uint64, run func(t *testing.T, name string, seed uint64)) {
	seed := seed(t)
	switch choice {
	case "all":
	case "random":
		names = []string{names[clustertest.Rand(seed, stream).IntN(len(names))]}
	default:
		if !slices.Contains(names, choice) {
			t.Fatalf("-%s=%s: want one of %s, all or random", flag, choice, strings.Join(names, ", "))
		}
		names = []string{choice}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Logf("rerun this scenario: go test ./test/robustness/ -run '^%s$' -count=1 -v -seed=%d -%s=%s", test, seed, flag, name)
			run(t, name, seed)
		})
	}
}

// logTrace logs the nodes' log lines that re matches, in node order, so
// a passing run shows how its fault played out.
func logTrace(t *testing.T, c *clustertest.Cluster, re *regexp.Regexp, what string) {
	t.Helper()
	var b strings.Builder
	for _, n := range c.Nodes() {
		for _, line := range re.FindAllString(n.Log(), -1) {
			fmt.Fprintf(&b, "\n\tsn%d: %.300s", n.ID, strings.TrimSpace(line))
		}
	}
	t.Logf("%s in the nodes' logs:%s", what, b.String())
}

// checkPlanResumed checks that show events says a new admin leader resumed
// deploy-topology plan id.
func checkPlanResumed(t *testing.T, c *clustertest.Cluster, id int) {
	t.Helper()
	events, err := c.Admin(failoverTimeout, "show", "events")
	if want := fmt.Sprintf("plan %d (deploy-topology) resumed", id); err != nil || !strings.Contains(events, want) {
		t.Errorf("show events lacks %q: the plan was not resumed by a new admin leader (%v):\n%s", want, err, events)
	}
}
