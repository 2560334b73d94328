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
	State    string            `json:"state"` // PENDING, RUNNING, SUCCEEDED, ERROR
	Attempts int               `json:"attempts,omitempty"`
	Error    string            `json:"error,omitempty"`
}

func newTask(kind, desc string, args map[string]string) *Task {
	return &Task{Kind: kind, Desc: desc, Args: args, State: "PENDING"}
}

// title is the plan's one-line description.
func (p *Plan) title() string {
	var args []string
	for _, k := range sortedKeys(p.Args) {
		if k == "wait" || k == "noexecute" {
			continue
		}
		args = append(args, "-"+k+" "+p.Args[k])
	}
	return strings.TrimSpace(p.Name + " " + strings.Join(args, " "))
}

func (p *Plan) summary() string {
	done := 0
	for _, t := range p.Tasks {
		if t.State == "SUCCEEDED" {
			done++
		}
	}
	s := fmt.Sprintf("Plan %d [%s] %s: %d/%d tasks done", p.ID, p.title(), p.State, done, len(p.Tasks))
	if p.Error != "" {
		s += "\n  error: " + p.Error
	}
	return s
}

func (p *Plan) detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan %d [%s]\n", p.ID, p.title())
	fmt.Fprintf(&b, "State:   %s\n", p.State)
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
	fmt.Fprintf(&b, "Tasks:\n")
	for i, t := range p.Tasks {
		fmt.Fprintf(&b, "  %2d %-9s %s", i+1, t.State, t.Desc)
		if t.Attempts > 1 {
			fmt.Fprintf(&b, " (%d attempts)", t.Attempts)
		}
		if t.Error != "" {
			fmt.Fprintf(&b, "\n     last error: %s", t.Error)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
