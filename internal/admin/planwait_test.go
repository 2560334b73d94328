package admin

import (
	"strings"
	"testing"
	"time"
)

// TestWaitReplyFlagsUnfinishedPlans checks that plan wait reports a problem
// (a non-zero exit in the shell) unless the plan SUCCEEDED, and says why
// the wait ended for a plan that is not over.
func TestWaitReplyFlagsUnfinishedPlans(t *testing.T) {
	for _, tc := range []struct {
		state    PlanState
		problems bool
		want     string
	}{
		{Succeeded, false, "State:   SUCCEEDED"},
		{Pending, true, "Plan 4 is PENDING: it does not run until plan execute -id 4"},
		{Running, true, "Plan 4 is still RUNNING after 2s; it goes on: plan wait -id 4 again"},
		{Failed, true, "State:   ERROR"},
		{Canceled, true, "State:   CANCELED"},
	} {
		p := &Plan{ID: 4, Name: "stop-service", State: tc.state, Created: time.Unix(0, 0)}
		r, err := (&Service{}).waitReply(&Meta{Plans: []*Plan{p}}, p, 2*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.state, err)
		}
		if r.GetProblems() != tc.problems || !strings.Contains(r.GetText(), tc.want) {
			t.Errorf("%s: problems=%v text:\n%s\nwant problems=%v and %q", tc.state, r.GetProblems(), r.GetText(), tc.problems, tc.want)
		}
	}
}
