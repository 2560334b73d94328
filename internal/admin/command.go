package admin

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ArgKind is the type of a command option's value.
type ArgKind int

// The option kinds.
const (
	String ArgKind = iota
	Int            // a non-negative decimal integer
	Flag           // no value; present means "true"
)

// Arg is one option of a command, written -name VALUE or --name VALUE.
type Arg struct {
	Name     string
	Kind     ArgKind
	Required bool
	// OneOf names another option that may stand in for this one (exactly
	// one of the two must be given when Required).
	OneOf string
	// Choices, when set, lists the only accepted values.
	Choices []string
	// Min and Max bound an Int option's value, both inclusive, when Max is
	// not 0. Without them an Int is 0 to math.MaxInt32.
	Min, Max uint64
	Help     string
}

// Command is one admin command. Name is its canonical name: the words that
// select it ("plan deploy-zone"). The table is shared by the shell, which
// parses and checks a command line against it, and the admin service,
// which runs it.
type Command struct {
	Name    string
	Args    []Arg
	Summary string // one line
	Help    string // what it does, what to do next; may span lines
	// Plan commands create a plan and also take -wait and -noexecute.
	Plan bool
	// Immediate commands accept -wait (as Oracle's scripts give it) but are
	// done when they answer: the user commands.
	Immediate bool
}

// userWait is accepted by the user commands, as Oracle's scripts give it:
// they are done when they answer.
var userWait = Arg{Name: "wait", Kind: Flag, Help: "accepted for Oracle's scripts: the command is done when it answers"}

// planArgs are added to every plan command.
var planArgs = []Arg{
	{Name: "wait", Kind: Flag, Help: "wait until the plan ends and print its outcome"},
	{Name: "noexecute", Kind: Flag, Help: "create the plan in state PENDING without running it (run it later with plan execute -id N)"},
}

// Commands is the command table, in the order `help` lists it.
var Commands = []Command{
	{Name: "configure", Summary: "name the store (the first command for a new store)",
		Args: []Arg{{Name: "name", Required: true, Help: "the store's name; clients give it when they connect"}},
		Help: "Creates the store's admin on the storage node the shell is connected to. Run it once, first.\n" +
			"Next: plan deploy-zone, plan deploy-sn, plan deploy-admin."},
	{Name: "plan deploy-zone", Plan: true, Summary: "create a zone (a group of storage nodes, such as a data center)",
		Args: []Arg{
			{Name: "name", Required: true, Help: "the zone's name"},
			{Name: "rf", Kind: Int, Required: true, Help: "replication factor: replicas of every shard in this zone"},
			{Name: "type", Choices: []string{"primary", "secondary"}, Help: "primary (default) zones vote and may lead; secondary zones are recorded but not yet placed"},
		}},
	{Name: "plan deploy-sn", Plan: true, Summary: "add a started storage node to a zone",
		Args: []Arg{
			{Name: "zn", Required: true, OneOf: "znname", Help: "zone id (zn1 or 1)"},
			{Name: "znname", Help: "zone name, instead of -zn"},
			{Name: "host", Required: true, Help: "the node's host, as clients and other nodes reach it"},
			{Name: "port", Kind: Int, Required: true, Min: 1, Max: 65535, Help: "the node's port (the one given to cairn sn init)"},
		},
		Help: "The node must be running (cairn sn start). Its capacity comes from its own config."},
	{Name: "plan deploy-admin", Plan: true, Summary: "host an admin replica on a storage node",
		Args: []Arg{{Name: "sn", Required: true, Help: "storage node id (sn1 or 1)"}},
		Help: "Admins form a Raft group; three admins survive the loss of one."},
	{Name: "plan remove-admin", Plan: true, Summary: "remove an admin replica from the admin group",
		Args: []Arg{
			{Name: "admin", Required: true, Help: "the admin, named by its storage node as show admins lists it (sn3 or 3)"},
			{Name: "force", Kind: Flag, Help: "remove it even if the admins left would then lack a majority of running ones"},
		},
		Help: "If it is the admin leader, the leadership moves to another admin first. Its node keeps serving data,\n" +
			"stops its admin replica, deletes ROOT/admin and forwards admin commands to the other admins.\n" +
			"Refused for the last admin, and (unless -force) if the admins left would have fewer running ones than\n" +
			"the majority they need to elect a leader. If its node does not answer, the admin is still removed\n" +
			"from the group; run the plan again when the node is back so it drops its replica.\n" +
			"Add an admin there again with plan deploy-admin -sn SN."},
	{Name: "plan deploy-topology", Plan: true, Summary: "deploy a topology candidate: create its shards, or change a running store to it (new shards, replica changes, partition moves, splits)",
		Args: []Arg{{Name: "name", Required: true, Help: "the candidate's name (topology create, or clone and reshape)"},
			{Name: "max-rate", Kind: Int, Help: "MB/s (10^6 bytes) each partition move copies at (default: unbounded)"},
			{Name: "move-share", Kind: Int, Min: 1, Max: 100, Help: "percent of the time rounds of partition moves run; between rounds the plan pauses, leaving the nodes to the workload (1-100, default 50: a running workload keeps about 70 % or more of its throughput)"}}},
	{Name: "plan stop-service", Plan: true, Summary: "stop a shard replica (a replication node, rgN-rnM)",
		Args: []Arg{
			{Name: "service", Required: true, Help: "rgN-rnM: shard N's replica on storage node M"},
			{Name: "force", Kind: Flag, Help: "stop it even if the shard is then left without a majority of running replicas"},
		},
		Help: "Refused if, once it is stopped, fewer than a majority of the shard's replicas would run (counting\n" +
			"replicas stopped by plan stop-service and replicas whose node does not answer): the shard could then\n" +
			"not elect a leader or take writes. Start the other replicas first, or give -force.\n" +
			"Start the replica again with plan start-service -service rgN-rnM."},
	{Name: "plan start-service", Plan: true, Summary: "start a stopped shard replica",
		Args: []Arg{{Name: "service", Required: true, Help: "rgN-rnM: shard N's replica on storage node M"}}},
	{Name: "plan migrate-sn", Plan: true, Summary: "move every replica of a storage node whose disk is gone onto a newly deployed one",
		Args: []Arg{
			{Name: "from", Required: true, Help: "the storage node whose disk is gone for good (sn3 or 3); it must be stopped"},
			{Name: "to", Required: true, Help: "a storage node deployed with plan deploy-sn in the same zone, hosting nothing yet"},
		},
		Help: "Each shard -from hosted gains a replica on -to (a Raft learner that catches up by snapshot, then a voter)\n" +
			"before -from leaves its Raft group, so a shard with RF 3 keeps serving throughout. If -from hosted an admin,\n" +
			"-to gets one and -from's leaves the admin group. Refused if -from still answers as a member of the store.\n" +
			"Afterwards plan remove-sn -sn FROM removes it. A node that lost its root can instead rejoin under its old id:\n" +
			"cairn sn start -root NEW -rejoin-as snN -helper-hosts HOST:PORT."},
	{Name: "plan remove-sn", Plan: true, Summary: "remove a storage node that hosts no replica and no admin",
		Args: []Arg{{Name: "sn", Required: true, Help: "storage node id (sn1 or 1)"}}},
	{Name: "plan verify-data", Plan: true, Summary: "check the data: every block on each node, and each shard's replicas compared partition by partition",
		Args: []Arg{
			{Name: "sn", Help: "only this storage node (sn1 or 1): its blocks, and the shards it hosts a replica of"},
			{Name: "shard", Help: "only this shard (rg1 or 1), and the blocks of the nodes hosting it"},
			{Name: "rate", Kind: Int, Help: "MB/s (10^6 bytes) each node reads at (default 100; 0: as fast as it can)"},
			{Name: "no-repair", Kind: Flag, Help: "report replicas that differ; do not rebuild them"},
		},
		Help: "Each node reads every block of its files, checking checksums; damage marks its engine corrupt and is\n" +
			"named with the node and the file. Each shard's leader then proposes a checksum through Raft: every replica\n" +
			"hashes each partition at that index, and the sums are compared. A replica that differs from the majority\n" +
			"is rebuilt from its peers (leadership moves off it, its data is deleted, it rejoins and takes a snapshot)\n" +
			"unless -no-repair, or unless the shard would lack a majority of running replicas meanwhile; the shard is\n" +
			"then checked again. Without a majority nothing is repaired. The plan fails if anything is left unrepaired.\n" +
			"show plan -id N gives each task's findings."},
	{Name: "plan execute", Summary: "run a PENDING, INTERRUPTED or ERROR plan",
		Args: []Arg{{Name: "id", Kind: Int, Required: true, Help: "plan id"}, planArgs[0]}},
	{Name: "plan wait", Summary: "wait for a plan to end",
		Args: []Arg{{Name: "id", Kind: Int, Required: true, Help: "plan id"},
			{Name: "seconds", Kind: Int, Help: "give up after this many seconds (default: wait until it ends)"}}},
	{Name: "plan interrupt", Summary: "stop a running plan after its current task (resume with plan execute)",
		Args: []Arg{{Name: "id", Kind: Int, Required: true, Help: "plan id"}}},
	{Name: "plan cancel", Summary: "cancel a plan that is not running",
		Args: []Arg{{Name: "id", Kind: Int, Required: true, Help: "plan id"}}},
	{Name: "pool create", Summary: "create a storage node pool",
		Args: []Arg{{Name: "name", Required: true, Help: "the pool's name"}}},
	{Name: "pool join", Summary: "add a storage node to a pool",
		Args: []Arg{{Name: "name", Required: true, Help: "the pool's name"}, {Name: "sn", Required: true, Help: "storage node id (sn1 or 1)"}}},
	{Name: "topology create", Summary: "lay out a topology candidate over a pool",
		Args: []Arg{
			{Name: "name", Required: true, Help: "the candidate's name"},
			{Name: "pool", Required: true, Help: "the pool whose storage nodes host the shards"},
			{Name: "partitions", Kind: Int, Required: true, Min: 1, Max: maxCreatePartitions, Help: "number of partitions, 1 to 65536 (fixed for the store's life; at least 10 per shard lets partitions move later)"},
		},
		Help: "Shards = what the pool's capacity allows at each zone's replication factor."},
	{Name: "topology clone", Summary: "copy the deployed topology, or a candidate, into a new candidate",
		Args: []Arg{
			{Name: "name", Required: true, Help: "the new candidate's name"},
			{Name: "current", Kind: Flag, Required: true, OneOf: "from", Help: "copy the deployed topology"},
			{Name: "from", Help: "copy this candidate, instead of -current"},
		},
		Help: "To change a running store, clone its topology (-current) and change the clone with topology redistribute,\n" +
			"rebalance, contract, change-repfactor, move-partition or split-partitions; each rewrites the candidate in place.\n" +
			"Next: topology preview -name NAME."},
	{Name: "topology redistribute", Summary: "add the shards a pool's spare capacity allows and spread the partitions over all shards",
		Args: []Arg{elasticName, elasticPool},
		Help: "Keeps every shard and its replicas. New shards go on the storage nodes with the most spare capacity (new\n" +
			"storage nodes, once deployed and joined to the pool), at each zone's replication factor; then partitions move,\n" +
			"as few as possible, until every shard owns as many as the others (or one more). Refused when no shard fits\n" +
			"and the partitions are spread evenly already. Next: topology preview -name NAME."},
	{Name: "topology rebalance", Summary: "move replicas to fix capacity, replication factor and leader-spread problems",
		Args: []Arg{elasticName, elasticPool},
		Help: "Keeps the shards and their partitions. Moves replicas, as few as possible, off storage nodes that left the\n" +
			"pool or host more than their capacity, adds replicas where a zone lacks its replication factor, and spreads\n" +
			"preferred leaders evenly. Next: topology preview -name NAME."},
	{Name: "topology contract", Summary: "remove the shards a smaller pool cannot host and move their partitions and replicas",
		Args: []Arg{elasticName, elasticPool},
		Help: "After storage nodes leave the pool: removes the shards the pool can no longer host (highest ids first),\n" +
			"gives their partitions to the other shards evenly, and moves replicas off the nodes that left. Once deployed,\n" +
			"remove the emptied storage nodes with plan remove-sn. Next: topology preview -name NAME."},
	{Name: "topology change-repfactor", Summary: "add replicas of every shard in a zone",
		Args: []Arg{elasticName, elasticPool,
			{Name: "zn", Required: true, Help: "the zone: its id (zn1 or 1) or its name"},
			{Name: "rf", Kind: Int, Required: true, Help: "the zone's new replication factor (larger than its current one)"},
		},
		Help: "Adds replicas in the zone to every shard, on the zone's storage nodes with the most spare capacity.\n" +
			"A replication factor only grows. Next: topology preview -name NAME."},
	{Name: "topology move-partition", Summary: "give one partition to another shard",
		Args: []Arg{elasticName,
			{Name: "partition", Kind: Int, Required: true, Help: "the partition's number (0 to partitions-1)"},
			{Name: "shard", Required: true, Help: "the shard to own it (rg2 or 2)"},
		},
		Help: "A manual move, say of a hot partition to a quiet shard. A move that leaves partition counts more than one\n" +
			"apart deploys, and topology validate and verify configuration then warn of it; topology redistribute\n" +
			"evens the counts out again. Next: topology preview -name NAME."},
	{Name: "topology split-partitions", Summary: "split every partition's hash range into equal parts",
		Args: []Arg{elasticName,
			{Name: "factor", Kind: Int, Required: true, OneOf: "partitions", Help: "parts per partition (at least 2)"},
			{Name: "partitions", Kind: Int, Help: "the new partition count, a multiple of the current one, instead of -factor"},
		},
		Help: "Partition p of n becomes partitions p*f to p*f+f-1 of n*f, all on p's shard: no key changes shard and none\n" +
			"is re-hashed, since a key's new partition is always one of its old partition's parts. At most 1048576\n" +
			"partitions. Then topology redistribute can spread them. Next: topology preview -name NAME."},
	{Name: "topology preview", Summary: "show what deploying a candidate would change",
		Args: []Arg{{Name: "name", Required: true, Help: "the candidate's name"}},
		Help: "Over a deployed store it lists every partition move with its size on disk, as the storage nodes estimate\n" +
			"it (\"size unknown\" when no node of the shard answers), after a summary."},
	{Name: "topology validate", Summary: "check a candidate (default: the deployed topology) against the placement rules",
		Args: []Arg{{Name: "name", Help: "the candidate's name"}}},
	{Name: "topology view", Summary: "show a candidate",
		Args: []Arg{{Name: "name", Required: true, Help: "the candidate's name"}}},
	{Name: "topology list", Summary: "list the topology candidates"},
	{Name: "show plans", Summary: "list the plans"},
	{Name: "show plan", Summary: "show one plan and its tasks",
		Args: []Arg{{Name: "id", Kind: Int, Required: true, Help: "plan id"}}},
	{Name: "show topology", Summary: "show the deployed topology"},
	{Name: "plan create-user", Immediate: true, Summary: "create a user of a secure store (role readwrite, or sysadmin with -admin)",
		Args: []Arg{
			{Name: "name", Required: true, Help: "the user's name"},
			{Name: "password", Required: true, Help: "the user's password (at least 8 characters; never stored, only its argon2id hash)"},
			{Name: "admin", Kind: Flag, Help: "make the user a sysadmin (users and security) instead of readwrite"},
			userWait,
		},
		Help: "Needs role sysadmin. The user table reaches every storage node within a second.\n" +
			"Next: plan grant -role R -user NAME for another role; the user logs in with a login file."},
	{Name: "plan drop-user", Immediate: true, Summary: "remove a user; its sessions end",
		Args: []Arg{{Name: "name", Required: true, Help: "the user's name"}, userWait}, Help: "Needs role sysadmin."},
	{Name: "plan change-user", Immediate: true, Summary: "set a user's password; its sessions end",
		Args: []Arg{
			{Name: "name", Required: true, Help: "the user's name"},
			{Name: "set-password", Kind: Flag, Required: true, Help: "set a new password"},
			{Name: "password", Required: true, Help: "the new password"},
			userWait,
		}, Help: "Needs role sysadmin."},
	{Name: "plan grant", Immediate: true, Summary: "give a user a role (and the roles it includes)",
		Args: []Arg{
			{Name: "role", Required: true, Choices: []string{"readonly", "readwrite", "dbadmin", "sysadmin"}, Help: "the role"},
			{Name: "user", Required: true, Help: "the user's name"},
			userWait,
		}, Help: "Needs role sysadmin. Roles nest: sysadmin > dbadmin > readwrite > readonly. The user's sessions end."},
	{Name: "plan revoke", Immediate: true, Summary: "take a role (and those above it) from a user",
		Args: []Arg{
			{Name: "role", Required: true, Choices: []string{"readonly", "readwrite", "dbadmin", "sysadmin"}, Help: "the role"},
			{Name: "user", Required: true, Help: "the user's name"},
			userWait,
		}, Help: "Needs role sysadmin. The user keeps the role below; the user's sessions end."},
	{Name: "show users", Summary: "list the users of a secure store and their roles (never passwords)"},
	{Name: "show roles", Summary: "list the built-in roles and what each allows"},
	{Name: "show rejoin-config", Summary: "what a storage node that lost its whole root needs to rejoin under its old id (Oracle's generateconfig)",
		Args: []Arg{{Name: "sn", Required: true, Help: "storage node id (sn1 or 1)"}},
		Help: "Refused if the node still answers as that member, or was replaced by plan migrate-sn.\n" +
			"cairn sn start --root NEW --rejoin-as snN --helper-hosts HOST:PORT runs it and starts the node."},
	{Name: "show pools", Summary: "list the storage node pools"},
	{Name: "show zones", Summary: "list the zones"},
	{Name: "show admins", Summary: "list the admin replicas, their state and which one leads",
		Help: "Each admin is RUNNING,MASTER (the leader), RUNNING,REPLICA, NOT RUNNING or UNREACHABLE (its node does not answer)."},
	{Name: "show events", Summary: "show the event log",
		Args: []Arg{{Name: "last", Kind: Int, Help: "only the newest N events (default 50)"}}},
	{Name: "show perf", Summary: "KV calls per second and their latency on each storage node, now and since it started",
		Args: []Arg{{Name: "seconds", Kind: Int, Min: 1, Max: 60, Help: "how long to measure (default 2)"}},
		Help: "Asks every storage node twice, -seconds apart, for the KV calls it served and how long they took\n" +
			"(its histograms: cairn_request_duration_seconds at /metrics), reads and writes apart. Latency is the\n" +
			"node's own time on a call, waits for replication and fsyncs included, the network not."},
	{Name: "verify configuration", Summary: "check the topology rules and every service's health",
		Help: "Exits non-zero when a rule is violated or a service is unreachable or lagging. Warnings give advice."},
	{Name: "snapshot create", Summary: "take a consistent backup of every shard",
		Args: []Arg{{Name: "name", Required: true, Help: "the snapshot's name"}},
		Help: "Each shard is exported by its leader at one Raft index into ROOT/snapshots/NAME on that node,\n" +
			"then copied to the nodes of its other replicas. A node that cannot be reached misses its copies:\n" +
			"the snapshot still succeeds, says so, and restoring that node needs --from.\n" +
			"Restore a stopped store with cairn sn restore on every node."},
	{Name: "snapshot list", Summary: "list the snapshots"},
	{Name: "snapshot remove", Summary: "delete a snapshot from every node",
		Args: []Arg{{Name: "name", Required: true, Help: "the snapshot's name"}},
		Help: "Nodes that cannot be reached keep their files; the reply names them."},
	{Name: "ping", Summary: "contact every storage node and report each shard's and the admins' status",
		Help: "Shard Status counts the shards: healthy (a leader, every replica up), writable-degraded (a leader and a\n" +
			"majority up), read-only (no leader, some replica up), offline (none up). Exits non-zero when a shard is\n" +
			"read-only or offline or a storage node does not answer."},
}

// The options of the commands that change a candidate over a pool.
var (
	elasticName = Arg{Name: "name", Required: true, Help: "the candidate to change (topology clone -current makes one)"}
	elasticPool = Arg{Name: "pool", Required: true, Help: "the pool whose storage nodes the candidate may use"}
)

// Lookup finds the command that words start with and returns it and the
// number of words its name takes. ok is false if none matches.
func Lookup(words []string) (Command, int, bool) {
	best, n := Command{}, 0
	for _, c := range Commands {
		name := strings.Fields(c.Name)
		if len(name) > len(words) || len(name) <= n {
			continue
		}
		if slices.Equal(name, words[:len(name)]) {
			best, n = c, len(name)
		}
	}
	return best, n, n > 0
}

// AllArgs returns the command's options, plan options included.
func (c Command) AllArgs() []Arg {
	if !c.Plan {
		return c.Args
	}
	return append(slices.Clone(c.Args), planArgs...)
}

// Arg returns the option named name.
func (c Command) Arg(name string) (Arg, bool) {
	for _, a := range c.AllArgs() {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// Check verifies parsed options against the command: every option known,
// values of the right kind and choice, required ones present. Its errors
// name the option and say what is expected.
func (c Command) Check(args map[string]string) error {
	for name, v := range args {
		a, ok := c.Arg(name)
		if !ok {
			return fmt.Errorf("%s: unknown option -%s; it takes %s", c.Name, name, c.usageArgs())
		}
		if err := a.check(v); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	for _, a := range c.Args {
		if !a.Required {
			continue
		}
		_, has := args[a.Name]
		_, alt := args[a.OneOf]
		switch {
		case !has && !alt && a.OneOf != "":
			return fmt.Errorf("%s: give -%s or -%s", c.Name, a.Name, a.OneOf)
		case !has && !alt:
			return fmt.Errorf("%s: -%s is required (%s)", c.Name, a.Name, a.Help)
		case has && alt:
			return fmt.Errorf("%s: give -%s or -%s, not both", c.Name, a.Name, a.OneOf)
		}
	}
	return nil
}

func (a Arg) check(v string) error {
	switch a.Kind {
	case Int:
		if err := a.checkInt(v); err != nil {
			return err
		}
	case Flag:
		if v != "true" {
			return fmt.Errorf("-%s takes no value", a.Name)
		}
	}
	if len(a.Choices) > 0 && !slices.Contains(a.Choices, v) {
		return fmt.Errorf("-%s must be one of %s, not %q", a.Name, strings.Join(a.Choices, ", "), v)
	}
	if a.Kind == String && strings.TrimSpace(v) == "" {
		return fmt.Errorf("-%s wants a value", a.Name)
	}
	return nil
}

// checkInt checks an Int option's value against its range (Min to Max,
// or 0 to math.MaxInt32), and says the range when the value is outside it.
func (a Arg) checkInt(v string) error {
	lo, hi := a.Min, a.Max
	if hi == 0 {
		lo, hi = 0, math.MaxInt32
	}
	n, err := strconv.ParseUint(v, 10, 64)
	switch {
	case err == nil && n >= lo && n <= hi:
		return nil
	case a.Max == 0 && (err == nil || errors.Is(err, strconv.ErrRange)):
		return fmt.Errorf("-%s %s is too large: give at most %d", a.Name, v, hi)
	case a.Max == 0:
		return fmt.Errorf("-%s wants a non-negative integer, not %q", a.Name, v)
	}
	return fmt.Errorf("-%s wants an integer from %d to %d, not %q", a.Name, lo, hi, v)
}

// Usage returns the command's synopsis, e.g.
// "plan deploy-zone -name NAME -rf INT [-type primary|secondary] [-wait] [-noexecute]".
func (c Command) Usage() string {
	if s := c.usageArgs(); s != "no options" {
		return c.Name + " " + s
	}
	return c.Name
}

func (c Command) usageArgs() string {
	var parts []string
	for _, a := range c.AllArgs() {
		if a.Name == c.oneOfTarget(a.Name) {
			continue // printed with its partner
		}
		s := "-" + a.Name + a.metavar()
		if a.OneOf != "" {
			o, _ := c.Arg(a.OneOf)
			s += "|-" + o.Name + o.metavar()
		}
		if !a.Required {
			s = "[" + s + "]"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no options"
	}
	return strings.Join(parts, " ")
}

// oneOfTarget returns name if another option names it as its OneOf partner.
func (c Command) oneOfTarget(name string) string {
	for _, a := range c.Args {
		if a.OneOf == name {
			return name
		}
	}
	return ""
}

func (a Arg) metavar() string {
	switch {
	case a.Kind == Flag:
		return ""
	case len(a.Choices) > 0:
		return " " + strings.Join(a.Choices, "|")
	case a.Kind == Int:
		return " N"
	}
	return " " + strings.ToUpper(a.Name)
}
