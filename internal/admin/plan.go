package admin

import (
	"fmt"
	"strings"
	"time"
)

// PlanState is where a plan is in its life:
//
//	PENDING --execute--> RUNNING --all tasks done--> SUCCEEDED
//	                        |  \--a task failed-----> ERROR ------execute--> RUNNING
//	                        \--interrupt-----------> INTERRUPTED --execute--> RUNNING
//	PENDING, ERROR, INTERRUPTED --cancel--> CANCELED
type PlanState string

// The plan states.
const (
	Pending     PlanState = "PENDING"
	Running     PlanState = "RUNNING"
	Succeeded   PlanState = "SUCCEEDED"
	Failed      PlanState = "ERROR"
	Interrupted PlanState = "INTERRUPTED"
	Canceled    PlanState = "CANCELED"
)

// Terminal reports whether a plan in state s has stopped for good or until
// an operator acts.
func (s PlanState) Terminal() bool {
	return s == Succeeded || s == Failed || s == Interrupted || s == Canceled
}

// Plan is a persisted job: an ordered list of idempotent tasks. The executor
// on the admin leader runs the tasks of a RUNNING plan from Next on; after a
// leader change the new leader starts again at Next, so the task that was
// running runs again, which its idempotence makes safe.
type Plan struct {
	ID      int               `json:"id"`
	Name    string            `json:"name"` // the command, e.g. "deploy-topology"
	Args    map[string]string `json:"args"`
	State   PlanState         `json:"state"`
	Tasks   []*Task           `json:"tasks"`
	Next    int               `json:"next"` // index of the first unfinished task
	Error   string            `json:"error,omitempty"`
	Created time.Time         `json:"created"`
	Started time.Time         `json:"started,omitzero"`
	Ended   time.Time         `json:"ended,omitzero"`
	// Data holds what tasks decide once and later tasks (or a rerun after a
	// failover) must see again, such as the id given to a new storage node.
	Data map[string]string `json:"data,omitempty"`
}

// Task is one step of a plan.
type Task struct {
	Kind     string            `json:"kind"`
	Args     map[string]string `json:"args,omitempty"`
	Desc     string            `json:"desc"`
	State    string            `json:"state"` // one of the task states below
	Attempts int               `json:"attempts,omitempty"`
	Error    string            `json:"error,omitempty"`
	// Progress is a long task's progress while it runs (plan
	// verify-data), and Result what a task found, in sentences.
	Progress string   `json:"progress,omitempty"`
	Result   []string `json:"result,omitempty"`
	// Problem is set by a task that found something it did not repair;
	// the plan's last task (verify-report) then fails it.
	Problem bool `json:"problem,omitempty"`
}

// The task states. A task is RUNNING while the executor works on it and
// INTERRUPTED when plan interrupt stopped its plan before it ended; plan
// execute sets it back to PENDING and the executor then runs it again.
const (
	taskPending     = "PENDING"
	taskRunning     = "RUNNING"
	taskSucceeded   = "SUCCEEDED"
	taskFailed      = "ERROR"
	taskInterrupted = "INTERRUPTED"
)

func newTask(kind, desc string, args map[string]string) *Task {
	return &Task{Kind: kind, Desc: desc, Args: args, State: taskPending}
}

// waitingFor returns the id of the plan that plan p waits for, or 0 if p
// is not waiting. The executor runs one RUNNING plan at a time: running,
// the plan it is on now (0 if none), and when it finishes, the first
// RUNNING plan in id order. So a RUNNING plan waits for running if that
// plan is still RUNNING, and otherwise for the first RUNNING plan before
// it.
func (m *Meta) waitingFor(p *Plan, running int) int {
	if p.State != Running {
		return 0
	}
	if q := m.plan(running); q != nil && q.State == Running {
		if q.ID == p.ID {
			return 0
		}
		return q.ID
	}
	for _, q := range m.Plans {
		if q.State == Running {
			if q.ID == p.ID {
				return 0
			}
			return q.ID
		}
	}
	return 0
}

// stateText is p's state as show plan prints it: the state, and for a
// RUNNING plan queued behind another, which one it waits for.
func (p *Plan) stateText(waitingFor int) string {
	if waitingFor == 0 {
		return string(p.State)
	}
	return fmt.Sprintf("%s (waiting for plan %d to finish)", p.State, waitingFor)
}

// planView is a plan as show plan and show plans report it in JSON: the
// stored plan, and the plan it waits for (see Service.waitingFor).
type planView struct {
	*Plan
	WaitingFor int `json:"waiting_for,omitempty"`
}

// stateError is the error for a request to move plan p to state to, which
// only a plan in one of the states from may take.
func stateError(p *Plan, to PlanState, from []PlanState) error {
	verb := map[PlanState]string{Running: "executed", Interrupted: "interrupted", Canceled: "canceled"}[to]
	msg := fmt.Sprintf("plan %d is %s; only a %s plan can be %s", p.ID, p.State, orList(from), verb)
	switch {
	case p.State == Running && to == Running:
		msg = fmt.Sprintf("plan %d is already RUNNING; wait for it with plan wait -id %d", p.ID, p.ID)
	case p.State == Running:
		msg += fmt.Sprintf(": interrupt it first with plan interrupt -id %d", p.ID)
	}
	return failed("%s", msg)
}

// orList joins states as a sentence does: "A", "A or B", "A, B or C".
func orList(states []PlanState) string {
	s := make([]string, len(states))
	for i, st := range states {
		s[i] = string(st)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// title is the plan's one-line description: its command and options,
// flags (-force) without their value.
func (p *Plan) title() string {
	cmd, _, _ := Lookup([]string{"plan", p.Name})
	var args []string
	for _, k := range sortedKeys(p.Args) {
		if k == "wait" || k == "noexecute" {
			continue
		}
		if a, ok := cmd.Arg(k); ok && a.Kind == Flag {
			args = append(args, "-"+k)
			continue
		}
		args = append(args, "-"+k+" "+p.Args[k])
	}
	return strings.TrimSpace(p.Name + " " + strings.Join(args, " "))
}

// summary is the plan in one line (two with its error). waitingFor is
// Service.waitingFor.
func (p *Plan) summary(waitingFor int) string {
	done := 0
	for _, t := range p.Tasks {
		if t.State == taskSucceeded {
			done++
		}
	}
	s := fmt.Sprintf("Plan %d [%s] %s: %d/%d tasks done", p.ID, p.title(), p.stateText(waitingFor), done, len(p.Tasks))
	if p.Error != "" {
		s += "\n  error: " + p.Error
	}
	return s
}

// detail is the plan as show plan prints it. waitingFor is
// Service.waitingFor.
func (p *Plan) detail(waitingFor int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan %d [%s]\n", p.ID, p.title())
	fmt.Fprintf(&b, "State:   %s\n", p.stateText(waitingFor))
	fmt.Fprintf(&b, "Created: %s\n", p.Created.Format(time.RFC3339))
	if !p.Started.IsZero() {
		fmt.Fprintf(&b, "Started: %s\n", p.Started.Format(time.RFC3339))
	}
	if !p.Ended.IsZero() {
		fmt.Fprintf(&b, "Ended:   %s\n", p.Ended.Format(time.RFC3339))
	}
	if p.Error != "" {
		fmt.Fprintf(&b, "Error:   %s\n", p.Error)
	}
	if n := p.Data["note"]; n != "" {
		fmt.Fprintf(&b, "Note:    %s\n", n)
	}
	if m := p.movesLine(); m != "" {
		fmt.Fprintf(&b, "Moves:   %s\n", m)
	}
	fmt.Fprintf(&b, "Tasks:\n")
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "  %2d %-9s %s", i+1, t.State, t.Desc)
		if t.Attempts > 1 {
			fmt.Fprintf(&b, " (%d attempts)", t.Attempts)
		}
		if t.Error != "" {
			fmt.Fprintf(&b, "\n     last error: %s", t.Error)
		}
		if t.Progress != "" && t.State == taskRunning {
			fmt.Fprintf(&b, "\n     progress: %s", t.Progress)
		}
		for _, r := range t.Result {
			fmt.Fprintf(&b, "\n     %s", r)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
