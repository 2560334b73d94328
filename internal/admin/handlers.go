package admin

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/api/cairnpb"
	"github.com/cairndb/cairn/internal/admin/controlpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var handlers map[string]handler

func init() {
	handlers = map[string]handler{
		"configure":            (*Service).configure,
		"plan deploy-zone":     (*Service).planDeployZone,
		"plan create-user":     (*Service).planCreateUser,
		"plan drop-user":       (*Service).planDropUser,
		"plan change-user":     (*Service).planChangeUser,
		"plan grant":           (*Service).planGrant,
		"plan revoke":          (*Service).planRevoke,
		"show users":           (*Service).showUsers,
		"show roles":           (*Service).showRoles,
		"plan deploy-sn":       (*Service).planDeploySN,
		"plan deploy-admin":    (*Service).planDeployAdmin,
		"plan deploy-topology": (*Service).planDeployTopology,
		"plan stop-service":    (*Service).planStopService,
		"plan start-service":   (*Service).planStartService,
		"plan remove-sn":       (*Service).planRemoveSN,
		"plan migrate-sn":      (*Service).planMigrateSN,
		"show rejoin-config":   (*Service).showRejoinConfig,
		"plan remove-admin":    (*Service).planRemoveAdmin,
		"plan verify-data":     (*Service).planVerifyData,
		"plan execute":         (*Service).planExecute,
		"plan wait":            (*Service).planWait,
		"plan interrupt":       (*Service).planInterrupt,
		"plan cancel":          (*Service).planCancel,
		"pool create":          (*Service).poolCreate,
		"pool join":            (*Service).poolJoin,
		"topology create":      (*Service).topologyCreate,
		"topology preview":     (*Service).topologyPreview,
		"topology validate":    (*Service).topologyValidate,
		"topology view":        (*Service).topologyView,
		"topology list":        (*Service).topologyList,
		"show plans":           (*Service).showPlans,
		"show plan":            (*Service).showPlan,
		"show topology":        (*Service).showTopology,
		"show pools":           (*Service).showPools,
		"show zones":           (*Service).showZones,
		"show admins":          (*Service).showAdmins,
		"show events":          (*Service).showEvents,
		"show perf":            (*Service).showPerf,
		"verify configuration": (*Service).verify,
		"snapshot create":      (*Service).snapshotCreate,
		"snapshot list":        (*Service).snapshotList,
		"snapshot remove":      (*Service).snapshotRemove,
		"ping":                 (*Service).ping,
	}
	maps.Copy(handlers, elasticHandlers)
}

func splitWords(s string) []string { return strings.Fields(s) }

var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// CheckStoreName refuses a store name configure would refuse (InvalidArgument).
func CheckStoreName(name string) error { return checkName("store", name) }

func checkName(what, name string) error {
	if !nameRE.MatchString(name) {
		return usageError("%s name %q: use 1-64 letters, digits, '_', '.' or '-', starting with a letter", what, name)
	}
	return nil
}

// loadConfigured loads the metadata and fails if configure has not run.
// It reads linearizably on the leader, or this replica's copy when ctx is
// marked by withLocalRead (a local command without a leader, noleader.go).
func (s *Service) loadConfigured(ctx context.Context) (*Meta, error) {
	load := s.store.load
	if isLocalRead(ctx) {
		load = s.store.loadStale
	}
	m, _, err := load(ctx)
	if err != nil {
		return nil, err
	}
	if m.Store == "" {
		return nil, ErrNoMeta
	}
	return m, nil
}

func (s *Service) configure(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	name := a["name"]
	if err := checkName("store", name); err != nil {
		return nil, err
	}
	uid := ""
	if s.cfg.Self != nil {
		uid = s.cfg.Self().GetUid()
	}
	m, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store != "" && m.Store != name {
			return failed("the store is already named %q; its name cannot change (clients connect by it)", m.Store)
		}
		if m.Store == "" {
			m.Store, m.BootstrapUID, m.NextSN = name, uid, 1
			m.event("store %s configured; its first admin runs on the node that will be sn1", name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply(fmt.Sprintf("Store configured: %s", m.Store), map[string]any{"store": m.Store})
}

// createPlan persists a new plan (RUNNING, or PENDING with -noexecute) and
// wakes the executor.
func (s *Service) createPlan(ctx context.Context, name string, args map[string]string, tasks []*Task, data map[string]string) (*cairnpb.AdminReply, error) {
	var p *Plan
	var waiting int
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		for _, q := range m.Plans {
			if q.State == Running && q.Name == name && maps.Equal(q.Args, args) {
				return failed("plan %d (%s) is already running; wait for it with plan wait -id %d", q.ID, q.title(), q.ID)
			}
		}
		m.NextPlan++
		// Started is set by the executor when it starts the plan.
		p = &Plan{ID: m.NextPlan, Name: name, Args: args, State: Running, Tasks: tasks, Data: data, Created: time.Now().UTC()}
		if args["noexecute"] == "true" {
			p.State = Pending
		}
		m.Plans = append(m.Plans, p)
		m.event("plan %d (%s) created, %s", p.ID, p.title(), p.State)
		waiting = s.waitingFor(m, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.kick()
	return reply(planCreatedText(p, waiting, args["wait"] == "true"), planDoc(p, waiting, false))
}

// planCreatedText is the reply to a command that created plan p, which waits
// for plan waiting (0: none). With -wait (waited) the shell waits itself,
// so the reply does not tell how to wait.
func planCreatedText(p *Plan, waiting int, waited bool) string {
	howToWait := fmt.Sprintf("\n\tTo wait for completion, use plan wait -id %d", p.ID)
	if waited {
		howToWait = ""
	}
	switch {
	case p.State == Pending:
		return fmt.Sprintf("Created plan %d (PENDING). Run it with plan execute -id %d", p.ID, p.ID)
	case waiting != 0:
		return fmt.Sprintf("Queued plan %d: it starts when plan %d finishes (plans run one at a time; see show plan -id %d).%s", p.ID, waiting, waiting, howToWait)
	}
	return fmt.Sprintf("Started plan %d. Use show plan -id %d to check status.%s", p.ID, p.ID, howToWait)
}

func (s *Service) planDeployZone(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkName("zone", a["name"]); err != nil {
		return nil, err
	}
	rf, _ := strconv.Atoi(a["rf"])
	if rf < 1 || rf > 9 {
		return nil, usageError("plan deploy-zone: -rf %d; a replication factor is between 1 and 9 (3 survives the loss of one node)", rf)
	}
	typ := a["type"]
	if typ == "" {
		typ = "primary"
	}
	if z := m.zoneByName(a["name"]); z != nil {
		return nil, failed("zone %s already exists as %s (rf %d); show zones lists the zones", z.Name, zoneName(z.ID), z.RF)
	}
	t := newTask("add-zone", fmt.Sprintf("deploy zone %s (rf %d, %s)", a["name"], rf, typ), map[string]string{"name": a["name"], "rf": a["rf"], "type": typ})
	return s.createPlan(ctx, "deploy-zone", a, []*Task{t}, nil)
}

func (s *Service) planDeploySN(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	var z *Zone
	if a["znname"] != "" {
		if z = m.zoneByName(a["znname"]); z == nil {
			return nil, notFound("there is no zone named %q; deploy it first (plan deploy-zone -name %s -rf 3 -wait) or see show zones", a["znname"], a["znname"])
		}
	} else {
		id, err := parseID(a["zn"], "zn")
		if err != nil {
			return nil, usageError("-zn: %v", err)
		}
		if z = m.zoneByID(int(id)); z == nil {
			return nil, notFound("there is no zone %s; show zones lists the zones", zoneName(int(id)))
		}
	}
	addr := a["host"] + ":" + a["port"]
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	info, err := s.control(addr).Describe(dctx, &controlpb.DescribeRequest{})
	cancel()
	if err != nil {
		return nil, failed("no storage node answers at %s (%s): start it there with cairn sn start --root DIR, and check -host and -port", addr, taskError(err))
	}
	if sn := m.snByUID(info.GetUid()); sn != nil {
		return nil, failed("the node at %s is already deployed as %s", addr, snName(sn.ID))
	}
	if info.GetStore() != "" && info.GetStore() != m.Store {
		return nil, failed("the node at %s belongs to store %q; initialize a fresh root for store %s", addr, info.GetStore(), m.Store)
	}
	t := newTask("register-sn", fmt.Sprintf("deploy storage node at %s in %s", addr, zoneName(z.ID)),
		map[string]string{"zone": strconv.Itoa(z.ID), "host": a["host"], "port": a["port"]})
	return s.createPlan(ctx, "deploy-sn", a, []*Task{t}, nil)
}

func (s *Service) snArg(m *Meta, v string) (*SN, error) {
	id, err := parseID(v, "sn")
	if err != nil {
		return nil, usageError("-sn: %v", err)
	}
	sn := m.sn(id)
	if sn == nil {
		return nil, notFound("there is no storage node %s; deploy it with plan deploy-sn, or see ping", snName(id))
	}
	return sn, nil
}

func (s *Service) planDeployAdmin(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	sn, err := s.snArg(m, a["sn"])
	if err != nil {
		return nil, err
	}
	if slices.Contains(m.Admins, sn.ID) {
		return nil, failed("%s already hosts an admin; show admins lists them", snName(sn.ID))
	}
	id := strconv.FormatUint(sn.ID, 10)
	args := map[string]string{"sn": id}
	tasks := []*Task{
		newTask("host-admin", "start an admin replica on "+snName(sn.ID), args),
		newTask("add-admin-learner", "add it to the admin group as a learner (no vote yet)", args),
		newTask("await-admin", "wait for it to catch up", args),
		newTask("add-admin-voter", "make it a voter", args),
		newTask("record-admin", "record the admin", args),
	}
	return s.createPlan(ctx, "deploy-admin", a, tasks, nil)
}

func (s *Service) planStopService(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.planService(ctx, a, false)
}

func (s *Service) planStartService(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.planService(ctx, a, true)
}

func (s *Service) planService(ctx context.Context, a map[string]string, run bool) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	shard, sn, err := parseService(a["service"])
	if err != nil {
		return nil, usageError("%v", err)
	}
	if m.Deployed == nil {
		return nil, failed("no topology is deployed, so there are no services yet")
	}
	sh, ok := m.Deployed.Shard(topologyShard(shard))
	if !ok || !slices.Contains(sh.Replicas, topologyNode(sn)) {
		return nil, notFound("there is no service %s; show topology lists them", a["service"])
	}
	svc := serviceName(shard, sn)
	if r, done := s.serviceUnchanged(ctx, m, svc, shard, sn, run); done {
		return r, nil
	}
	verb, name := "stop", "stop-service"
	if run {
		verb, name = "start", "start-service"
	}
	force := a["force"] == "true"
	if !run && !force {
		if err := checkMajority(m, sh, sn, s.describeAll(ctx, m), m.NextPlan+1); err != nil {
			return nil, err
		}
	}
	args := map[string]string{"shard": strconv.FormatUint(shard, 10), "sn": strconv.FormatUint(sn, 10), "run": strconv.FormatBool(run)}
	if force {
		args["force"] = "true"
	}
	t := newTask("set-service", fmt.Sprintf("%s %s", verb, serviceName(shard, sn)), args)
	return s.createPlan(ctx, name, a, []*Task{t}, nil)
}

// serviceUnchanged answers plan start-service for a replica that already
// runs (not recorded stopped, and its node says it runs), and plan
// stop-service for one already stopped (recorded stopped, and its node
// does not answer or does not run it): no plan, "nothing_to_do" in the
// JSON as for plan deploy-topology. done is false when a plan is needed.
func (s *Service) serviceUnchanged(ctx context.Context, m *Meta, svc string, shard, sn uint64, run bool) (*cairnpb.AdminReply, bool) {
	stopped := slices.Contains(m.Stopped, svc)
	if run == !stopped {
		var info *controlpb.NodeInfo
		if node := m.sn(sn); node != nil {
			info = s.describe(ctx, node.Addr())
		}
		st := shardState(info, shard)
		if serviceDone(run, st, info != nil) {
			state := map[bool]string{true: "running", false: "stopped"}[run]
			r, err := reply(fmt.Sprintf("%s is already %s; nothing to do", svc, state),
				map[string]any{"service": svc, "state": strings.ToUpper(state), "nothing_to_do": true})
			return r, err == nil
		}
	}
	return nil, false
}

// serviceDone reports whether a replica whose node reported st (answered:
// whether the node answered at all) is already as plan start-service
// (run) or stop-service would leave it.
func serviceDone(run bool, st *controlpb.ShardState, answered bool) bool {
	if run {
		return st.GetRunning()
	}
	return !answered || !st.GetRunning()
}

func (s *Service) planRemoveSN(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	m, err := s.loadConfigured(ctx)
	if err != nil {
		return nil, err
	}
	sn, err := s.snArg(m, a["sn"])
	if err != nil {
		return nil, err
	}
	if m.Deployed != nil && len(m.Deployed.ShardsOn(topologyNode(sn.ID))) > 0 {
		return nil, failed("%s hosts replicas of the deployed topology; a node with data cannot be removed: move them off first (topology clone -current, then topology contract or rebalance over a pool without it, and plan deploy-topology), or, if its disk is gone for good, plan migrate-sn -from %s -to snN", snName(sn.ID), snName(sn.ID))
	}
	if slices.Contains(m.Admins, sn.ID) || slices.Contains(s.adminMembers(), sn.ID) {
		return nil, failed("%s hosts an admin; remove it first with plan remove-admin -admin %s -wait", snName(sn.ID), snName(sn.ID))
	}
	args := map[string]string{"sn": strconv.FormatUint(sn.ID, 10)}
	tasks := []*Task{newTask("leave", "tell "+snName(sn.ID)+" to leave the store", args), newTask("remove-sn", "forget "+snName(sn.ID), args)}
	return s.createPlan(ctx, "remove-sn", a, tasks, nil)
}

func (s *Service) planByArg(m *Meta, a map[string]string) (*Plan, error) {
	id, _ := strconv.Atoi(a["id"])
	p := m.plan(id)
	if p == nil {
		return nil, notFound("there is no plan %d; show plans lists them", id)
	}
	return p, nil
}

// setPlanState moves a plan between states under the rules in plan.go.
func (s *Service) setPlanState(ctx context.Context, a map[string]string, to PlanState, from ...PlanState) (*cairnpb.AdminReply, error) {
	var p *Plan
	var waiting int
	_, err := s.store.update(ctx, func(m *Meta) error {
		var err error
		if p, err = s.planByArg(m, a); err != nil {
			return err
		}
		if !slices.Contains(from, p.State) {
			return stateError(p, to, from)
		}
		p.State, p.Error = to, ""
		if to == Running {
			// Started is set again by the executor when it resumes the plan.
			p.Started, p.Ended = time.Time{}, time.Time{}
		} else {
			p.Ended = time.Now().UTC()
		}
		setTaskStates(p, to)
		m.event("plan %d (%s) set %s", p.ID, p.title(), to)
		waiting = s.waitingFor(m, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.kick()
	return reply(p.summary(waiting), planDoc(p, waiting, false))
}

// planDoc is the JSON reply about plan p: its id and state, the plan it
// waits for if any (Service.waitingFor), and with full the plan itself.
func planDoc(p *Plan, waiting int, full bool) map[string]any {
	doc := map[string]any{"plan_id": p.ID, "state": p.State}
	if waiting != 0 {
		doc["waiting_for"] = waiting
	}
	if full {
		doc["plan"] = planView{p, waiting}
	}
	return doc
}

// setTaskStates makes p's task states follow its new state: interrupting
// a plan marks its running task INTERRUPTED; executing it again makes its
// interrupted or failed task PENDING until the executor runs it.
func setTaskStates(p *Plan, to PlanState) {
	for _, t := range p.Tasks {
		switch {
		case to == Interrupted && t.State == taskRunning:
			t.State = taskInterrupted
		case to == Running && (t.State == taskInterrupted || t.State == taskFailed):
			t.State = taskPending
		}
	}
}

func (s *Service) planExecute(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.setPlanState(ctx, a, Running, Pending, Interrupted, Failed)
}

func (s *Service) planInterrupt(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.setPlanState(ctx, a, Interrupted, Running)
}

func (s *Service) planCancel(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	return s.setPlanState(ctx, a, Canceled, Pending, Interrupted, Failed)
}

func (s *Service) planWait(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	limit := 10 * time.Minute
	if v, ok := a["seconds"]; ok {
		n, _ := strconv.Atoi(v)
		limit = time.Duration(n) * time.Second
	}
	deadline := time.Now().Add(limit)
	for {
		m, _, err := s.store.load(ctx)
		if err != nil {
			return nil, err
		}
		p, err := s.planByArg(m, a)
		if err != nil {
			return nil, err
		}
		if p.State.Terminal() || p.State == Pending || time.Now().After(deadline) {
			return s.waitReply(m, p, limit)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if !s.cfg.Replica.IsLeader() {
			return nil, failedOver()
		}
	}
}

// waitReply answers plan wait: the plan's detail, with Problems set (a
// non-zero exit in the shell) unless the plan SUCCEEDED, and a last line
// saying why the wait ended early for a plan that is not over.
func (s *Service) waitReply(m *Meta, p *Plan, limit time.Duration) (*cairnpb.AdminReply, error) {
	waiting := s.waitingFor(m, p)
	text := strings.TrimRight(p.detail(waiting), "\n")
	switch {
	case p.State == Pending:
		text += fmt.Sprintf("\nPlan %d is PENDING: it does not run until plan execute -id %d", p.ID, p.ID)
	case !p.State.Terminal():
		text += fmt.Sprintf("\nPlan %d is still %s after %s; it goes on: plan wait -id %d again, or show plan -id %d", p.ID, p.State, limit, p.ID, p.ID)
	}
	r, err := reply(text, planDoc(p, waiting, true))
	if err == nil && p.State != Succeeded {
		r.Problems = true
	}
	return r, err
}

// failedOver is Unavailable, so the shell asks again and reaches the new
// leader: plan remove-admin moves the leadership on purpose.
func failedOver() error {
	return status.Error(codes.Unavailable, "admin: this admin lost the leadership while waiting; retry")
}

func (s *Service) poolCreate(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	if err := checkName("pool", a["name"]); err != nil {
		return nil, err
	}
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		if m.pool(a["name"]) != nil {
			return failed("pool %s already exists; show pools lists them", a["name"])
		}
		m.Pools = append(m.Pools, Pool{Name: a["name"]})
		m.event("pool %s created", a["name"])
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply("Added pool "+a["name"], map[string]any{"pool": a["name"]})
}

func (s *Service) poolJoin(ctx context.Context, a map[string]string) (*cairnpb.AdminReply, error) {
	var id uint64
	_, err := s.store.update(ctx, func(m *Meta) error {
		if m.Store == "" {
			return ErrNoMeta
		}
		p := m.pool(a["name"])
		if p == nil {
			return notFound("there is no pool %s; create it with pool create -name %s", a["name"], a["name"])
		}
		sn, err := s.snArg(m, a["sn"])
		if err != nil {
			return err
		}
		id = sn.ID
		if !slices.Contains(p.SNs, sn.ID) {
			p.SNs = append(p.SNs, sn.ID)
			m.event("%s joined pool %s", snName(sn.ID), p.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply(fmt.Sprintf("Added Storage Node(s) [%s] to pool %s", snName(id), a["name"]), map[string]any{"pool": a["name"], "sn": id})
}
