package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errPermanent marks a task error that retrying cannot fix: the plan fails
// at once.
var errPermanent = errors.New("permanent")

func permanent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errPermanent, fmt.Sprintf(format, args...))
}

// errStopped ends a plan run without changing its state: this node lost
// the admin leadership or is closing, and the next leader resumes the plan.
var errStopped = errors.New("admin: executor stopped")

// executor runs RUNNING plans, one at a time in id order, while this
// replica leads the admin group.
func (s *Service) executor() {
	defer s.wg.Done()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	wasLeader := false
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-tick.C:
		}
		leader := s.cfg.Replica.IsLeader()
		if !leader {
			wasLeader = false
			continue
		}
		s.runPlans(!wasLeader)
		wasLeader = true
	}
}

// runPlans runs every RUNNING plan to its end (or until leadership is lost).
func (s *Service) runPlans(newLeader bool) {
	for {
		ctx, cancel := s.leaderContext()
		m, _, err := s.store.load(ctx)
		cancel()
		if err != nil {
			return
		}
		var p *Plan
		for _, q := range m.Plans {
			if q.State == Running {
				p = q
				break
			}
		}
		if p == nil {
			return
		}
		if newLeader && p.Next > 0 {
			s.log.Info("resuming a plan after an admin leader change", "plan", p.ID, "task", p.Next+1)
			ctx, cancel := s.leaderContext()
			_, _ = s.store.update(ctx, func(m *Meta) error {
				m.event("plan %d (%s) resumed at task %d by the admin on %s", p.ID, p.Name, p.Next+1, snName(s.cfg.Node))
				return nil
			})
			cancel()
		}
		newLeader = false
		if err := s.runPlan(p.ID); errors.Is(err, errStopped) {
			return
		}
	}
}

// leaderContext is cancelled when this replica stops leading or the
// service closes.
func (s *Service) leaderContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.stop:
				cancel()
				return
			case <-t.C:
				if !s.cfg.Replica.IsLeader() {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}

// runPlan runs plan id's tasks from its Next on.
func (s *Service) runPlan(id int) error {
	s.running.Store(int64(id))
	defer s.running.Store(0)
	ctx, cancel := s.leaderContext()
	defer cancel()
	for {
		m, _, err := s.store.load(ctx)
		if err != nil {
			return errStopped
		}
		p := m.plan(id)
		if p == nil || p.State != Running {
			return nil
		}
		if p.Next >= len(p.Tasks) {
			return s.finish(ctx, id, Succeeded, "")
		}
		if err := s.runTask(ctx, p); err != nil {
			if ctx.Err() != nil || errors.Is(err, errStopped) {
				return errStopped
			}
			if errors.Is(err, errInterrupted) {
				return nil
			}
			return s.finish(ctx, id, Failed, err.Error())
		}
	}
}

var errInterrupted = errors.New("interrupted")

// taskTimeout bounds one attempt of a task, except the long tasks of
// plan verify-data, which read every byte of a node or a shard at a
// bounded rate, the catch-up of a new replica (join-replica: it ends when
// the learner stops making progress), and the partition moves of plan
// deploy-topology, which
// copy a partition at a bounded rate (a retried move whose copy was not
// complete starts it again, so a 30 s bound would never let a big one
// end): they run until done, report progress as they go, and end with the
// plan's context (a round of moves also ends when it stops making
// progress, moveStallTimeout).
const taskTimeout = 30 * time.Second

var longTasks = map[string]bool{"verify-blocks": true, "verify-shard": true, "join-replica": true, "move-partitions": true}

func taskContext(ctx context.Context, t *Task) (context.Context, context.CancelFunc) {
	if longTasks[t.Kind] {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, taskTimeout)
}

// runTask runs the plan's next task until it succeeds, fails for good, the
// plan times out or is interrupted, or leadership is lost.
func (s *Service) runTask(ctx context.Context, p *Plan) error {
	i := p.Next
	t := p.Tasks[i]
	if s.cfg.TaskDelay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.cfg.TaskDelay):
		}
	}
	deadline := time.Now().Add(s.cfg.PlanTimeout)
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if err := s.setTask(ctx, p.ID, i, taskRunning, attempt, ""); err != nil {
			return err
		}
		started := time.Now()
		tctx, cancel := taskContext(ctx, t)
		err := s.do(tctx, p, t)
		cancel()
		// Time a long task spent working does not count against its retries.
		deadline = deadline.Add(max(0, time.Since(started)-taskTimeout))
		if err == nil {
			return s.completeTask(ctx, p.ID, i)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := taskError(err)
		s.log.Warn("plan task failed", "plan", p.ID, "task", t.Desc, "attempt", attempt, "err", msg)
		if errors.Is(err, errPermanent) || time.Now().After(deadline) {
			_ = s.setTask(ctx, p.ID, i, taskFailed, attempt, msg)
			return fmt.Errorf("task %d (%s): %s", i+1, t.Desc, msg)
		}
		if err := s.setTask(ctx, p.ID, i, taskRunning, attempt, msg); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func taskError(err error) string {
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
		if st.Code() == codes.Unavailable {
			msg = "unreachable: " + msg
		}
	}
	return strings.TrimPrefix(msg, errPermanent.Error()+": ")
}

// setTask records a task's progress, and when the plan started if this is
// its first; it fails with errInterrupted if the plan is no longer RUNNING.
func (s *Service) setTask(ctx context.Context, id, i int, state string, attempt int, msg string) error {
	_, err := s.store.update(ctx, func(m *Meta) error {
		p := m.plan(id)
		if p == nil || p.State != Running {
			return errInterrupted
		}
		if p.Started.IsZero() {
			p.Started = time.Now().UTC()
		}
		t := p.Tasks[i]
		t.State, t.Attempts, t.Error = state, attempt, msg
		return nil
	})
	return stopUnlessInterrupted(err)
}

// stopUnlessInterrupted turns a failed metadata write into errStopped: the
// plan is left as it is for the next leader.
func stopUnlessInterrupted(err error) error {
	if err == nil || errors.Is(err, errInterrupted) {
		return err
	}
	return errStopped
}

func (s *Service) completeTask(ctx context.Context, id, i int) error {
	_, err := s.store.update(ctx, func(m *Meta) error {
		p := m.plan(id)
		if p == nil {
			return errInterrupted
		}
		p.Tasks[i].State, p.Tasks[i].Error = taskSucceeded, ""
		if p.Next == i {
			p.Next = i + 1
		}
		return nil
	})
	return stopUnlessInterrupted(err)
}

func (s *Service) finish(ctx context.Context, id int, state PlanState, msg string) error {
	_, err := s.store.update(ctx, func(m *Meta) error {
		p := m.plan(id)
		if p == nil || p.State != Running {
			return nil
		}
		p.State, p.Error, p.Ended = state, msg, time.Now().UTC()
		if state == Succeeded {
			m.event("plan %d (%s) succeeded", p.ID, p.title())
		} else {
			m.event("plan %d (%s) failed: %s", p.ID, p.title(), msg)
		}
		return nil
	})
	if err != nil {
		return errStopped
	}
	return nil
}

// kick wakes the executor.
func (s *Service) kick() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// waitingFor returns the id of the plan that plan p, in m, waits for (see
// Meta.waitingFor), or 0. Commands run on the admin leader, whose executor
// this is.
func (s *Service) waitingFor(m *Meta, p *Plan) int {
	return m.waitingFor(p, int(s.running.Load()))
}
