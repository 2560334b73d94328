package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// State is what the page draws: each section is one admin command's JSON
// reply, or why there is none.
//
//	{"node": "sn2 (127.0.0.1:6000)", "time": "2026-11-29T07:00:00Z", "took_ms": 12,
//	 "ping":     {"data": {...ping -json...}, "problems": false},
//	 "verify":   {"data": {"violations": [...], "warnings": [...]}, "problems": true},
//	 "topology": {"data": {...show topology -json...}},
//	 "plans":    {"data": [...the plans not ended, then the newest 12, newest first...]},
//	 "events":   {"error": "admin: no admin leader is elected ..."}}
type State struct {
	Node     string    `json:"node"`
	Time     time.Time `json:"time"`
	TookMs   int64     `json:"took_ms"`
	Ping     Section   `json:"ping"`
	Verify   Section   `json:"verify"`
	Topology Section   `json:"topology"`
	Plans    Section   `json:"plans"`
	Events   Section   `json:"events"`
}

// Section is one command's answer: its JSON, and whether the command found
// problems (the shell's non-zero exit); or the error it ended with.
type Section struct {
	Data     json.RawMessage `json:"data,omitempty"`
	Problems bool            `json:"problems,omitempty"`
	Error    string          `json:"error,omitempty"`
}

// keepPlans is how many of the newest ended plans the console shows.
const keepPlans = 12

// lastEvents is how many of the newest events the console shows.
const lastEvents = "20"

// query is one command behind a section.
type query struct {
	command string
	args    map[string]string
	section func(*State) *Section
	// trim cuts the reply's JSON to what the page shows (nil: all of it).
	trim func(json.RawMessage) (json.RawMessage, error)
}

var queries = []query{
	{command: "ping", section: func(s *State) *Section { return &s.Ping }},
	{command: "verify configuration", section: func(s *State) *Section { return &s.Verify }},
	{command: "show topology", section: func(s *State) *Section { return &s.Topology }},
	{command: "show plans", section: func(s *State) *Section { return &s.Plans }, trim: recentPlans},
	{command: "show events", args: map[string]string{"last": lastEvents}, section: func(s *State) *Section { return &s.Events }},
}

// current returns a state collected within h.reuse, or collects one; a
// request that comes while one is collected waits for it. The collect runs
// with the caller's values (its login, checked by Gate) but not its
// cancellation, so a tab that goes away does not spoil its waiters' state.
func (h *Handler) current(ctx context.Context) State {
	h.mu.Lock()
	if !h.lastAt.IsZero() && time.Since(h.lastAt) < h.reuse {
		st := h.last
		h.mu.Unlock()
		return st
	}
	h.mu.Unlock()
	ch := h.flight.DoChan("state", func() (any, error) {
		st := h.collect(context.WithoutCancel(ctx))
		h.mu.Lock()
		h.last, h.lastAt = st, time.Now()
		h.mu.Unlock()
		return st, nil
	})
	select {
	case r := <-ch:
		return r.Val.(State)
	case <-ctx.Done():
		return State{Node: h.src.Self(), Time: time.Now().UTC(), Ping: Section{Error: "the request ended: " + ctx.Err().Error()}}
	}
}

// collect runs the queries in parallel, each bounded by h.timeout.
func (h *Handler) collect(ctx context.Context) State {
	start := time.Now()
	st := State{Node: h.src.Self(), Time: start.UTC()}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, q := range queries {
		sec := q.section(&st)
		wg.Go(func() { *sec = h.run(ctx, q) })
	}
	wg.Wait()
	st.TookMs = time.Since(start).Milliseconds()
	return st
}

// run runs one query.
func (h *Handler) run(ctx context.Context, q query) Section {
	r, err := h.src.Command(ctx, q.command, q.args)
	if err != nil {
		return Section{Error: errorText(q.command, err, h.timeout)}
	}
	data := json.RawMessage(r.GetJson())
	if !json.Valid(data) {
		return Section{Error: q.command + ": the admin's reply is not JSON"}
	}
	if q.trim != nil {
		if data, err = q.trim(data); err != nil {
			return Section{Error: fmt.Sprintf("%s: %v", q.command, err)}
		}
	}
	return Section{Data: data, Problems: r.GetProblems()}
}

// errorText words a command's failure for its section.
func errorText(command string, err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded {
		return fmt.Sprintf("%s: no answer within %v (the admin leader may be busy or unreachable)", command, timeout)
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return command + ": " + err.Error()
}

// recentPlans cuts show plans' list (in id order) to the plans not yet
// ended (PENDING or RUNNING) and the newest keepPlans others, newest first.
func recentPlans(raw json.RawMessage) (json.RawMessage, error) {
	var plans []json.RawMessage
	if err := json.Unmarshal(raw, &plans); err != nil {
		return nil, fmt.Errorf("the plan list is not a JSON array: %w", err)
	}
	out := make([]json.RawMessage, 0, min(len(plans), keepPlans))
	ended := 0
	for _, p := range slices.Backward(plans) {
		var head struct {
			State string `json:"state"`
		}
		if err := json.Unmarshal(p, &head); err != nil {
			return nil, fmt.Errorf("a plan is not a JSON object: %w", err)
		}
		if head.State != "PENDING" && head.State != "RUNNING" {
			if ended >= keepPlans {
				continue
			}
			ended++
		}
		out = append(out, p)
	}
	return json.Marshal(out)
}
