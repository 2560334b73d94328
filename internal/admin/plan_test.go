package admin

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestStateError(t *testing.T) {
	for _, tc := range []struct {
		state PlanState
		to    PlanState
		from  []PlanState
		want  string
	}{
		{Succeeded, Canceled, []PlanState{Pending, Interrupted, Failed},
			"plan 3 is SUCCEEDED; only a PENDING, INTERRUPTED or ERROR plan can be canceled"},
		{Canceled, Running, []PlanState{Pending, Interrupted, Failed},
			"plan 3 is CANCELED; only a PENDING, INTERRUPTED or ERROR plan can be executed"},
		{Pending, Interrupted, []PlanState{Running},
			"plan 3 is PENDING; only a RUNNING plan can be interrupted"},
		{Running, Canceled, []PlanState{Pending, Interrupted, Failed},
			"plan 3 is RUNNING; only a PENDING, INTERRUPTED or ERROR plan can be canceled: interrupt it first with plan interrupt -id 3"},
		{Running, Running, []PlanState{Pending, Interrupted, Failed},
			"plan 3 is already RUNNING; wait for it with plan wait -id 3"},
	} {
		err := stateError(&Plan{ID: 3, State: tc.state}, tc.to, tc.from)
		if st := status.Convert(err); st.Code() != codes.FailedPrecondition || st.Message() != tc.want {
			t.Errorf("%s -> %s: got %v %q, want %q", tc.state, tc.to, st.Code(), st.Message(), tc.want)
		}
	}
}

func TestWaitingFor(t *testing.T) {
	m := &Meta{Plans: []*Plan{
		{ID: 1, State: Succeeded}, {ID: 2, State: Interrupted}, {ID: 3, State: Running},
		{ID: 4, State: Pending}, {ID: 5, State: Running}, {ID: 6, State: Running},
	}}
	for _, tc := range []struct {
		running int         // the plan the executor is on
		want    map[int]int // plan id -> the plan it waits for
	}{
		{0, map[int]int{1: 0, 2: 0, 3: 0, 4: 0, 5: 3, 6: 3}},
		{3, map[int]int{1: 0, 2: 0, 3: 0, 4: 0, 5: 3, 6: 3}},
		// Plan 3 was executed again while the executor ran plan 5.
		{5, map[int]int{1: 0, 2: 0, 3: 5, 4: 0, 5: 0, 6: 5}},
		// The executor is leaving plan 2, just interrupted.
		{2, map[int]int{1: 0, 2: 0, 3: 0, 4: 0, 5: 3, 6: 3}},
	} {
		for id, want := range tc.want {
			if got := m.waitingFor(m.plan(id), tc.running); got != want {
				t.Errorf("running %d: waitingFor(plan %d) = %d, want %d", tc.running, id, got, want)
			}
		}
	}
	p := m.plan(5)
	p.Tasks = []*Task{newTask("add-zone", "deploy zone Z", nil)}
	if d := p.detail(3); !strings.Contains(d, "State:   RUNNING (waiting for plan 3 to finish)\n") {
		t.Errorf("detail of a waiting plan:\n%s", d)
	}
	if s := p.summary(3); !strings.Contains(s, "RUNNING (waiting for plan 3 to finish): 0/1 tasks done") {
		t.Errorf("summary of a waiting plan: %s", s)
	}
}

func TestSetTaskStates(t *testing.T) {
	p := &Plan{Tasks: []*Task{{State: taskSucceeded}, {State: taskRunning, Attempts: 5}, {State: taskPending}}}
	states := func() string {
		var s []string
		for _, t := range p.Tasks {
			s = append(s, t.State)
		}
		return strings.Join(s, " ")
	}
	setTaskStates(p, Interrupted)
	if got, want := states(), "SUCCEEDED INTERRUPTED PENDING"; got != want {
		t.Errorf("after interrupt: %s, want %s", got, want)
	}
	if d := p.detail(0); !strings.Contains(d, "   2 INTERRUPTED  (5 attempts)") {
		t.Errorf("detail after interrupt:\n%s", d)
	}
	setTaskStates(p, Running)
	if got, want := states(), "SUCCEEDED PENDING PENDING"; got != want {
		t.Errorf("after execute: %s, want %s", got, want)
	}
	p.Tasks[1].State = taskFailed
	setTaskStates(p, Running)
	if got, want := states(), "SUCCEEDED PENDING PENDING"; got != want {
		t.Errorf("after execute of a failed plan: %s, want %s", got, want)
	}
}

func TestTitleShowsFlagsWithoutValue(t *testing.T) {
	p := &Plan{Name: "stop-service", Args: map[string]string{"service": "rg1-rn2", "force": "true", "wait": "true"}}
	if got, want := p.title(), "stop-service -force -service rg1-rn2"; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
}
