// Package admin is Cairn's admin service: the store's metadata, the plans
// that change the store, and the commands of `cairn admin`.
//
// # Replication
//
// The admin replicas form a Raft group of their own (id Shard) over the
// storage nodes that host an admin, each with a small engine of its own,
// through internal/replica like any shard. The first member is the node
// where configure ran (sn1); plan deploy-admin adds others as learners,
// waits for them to catch up, then makes them voters. plan remove-admin
// (adminremove.go) takes one out: it refuses to remove the last admin, or
// (without -force) one whose removal would leave fewer running admins than
// the majority the others need; it moves the leadership off the admin to
// remove first (a leader cannot remove itself), removes it from the group,
// then has its node drop the replica (Control.DropAdmin). A node that is
// down then keeps a stale replica, recorded in Meta.AdminCleanup: it
// campaigns with its old configuration but wins no vote (its log lacks its
// removal), and the next plan remove-admin for it drops it.
//
// # Without a leader
//
// When no admin leader answers within a few seconds (noleader.go), ping,
// verify configuration, show topology and show admins answer from this
// replica's own copy of the metadata (a NONE_REQUIRED read, possibly
// stale) and Describe calls to the storage nodes, under a first line that
// says so; they report problems (exit 1). Every other command, plans and
// all that change metadata, fails Unavailable naming the admins that do
// not answer.
//
// # Metadata
//
// Meta (zones, storage nodes, pools, topology candidates, the deployed
// topology and its sequence number, plans, events, snapshots) is one JSON
// record. Every change reads it linearizably on the leader, changes it,
// and writes it back with a put-if-version synced on a majority (store.go).
//
// # Plans
//
// A plan is a persisted list of idempotent tasks with a cursor (plan.go).
// The executor (executor.go) runs on the admin leader only, one RUNNING
// plan at a time in id order, writing each task's state and the cursor
// after it. A new leader resumes a RUNNING plan at its cursor, running the
// interrupted task again, which its idempotence makes safe. A task that
// fails is retried with backoff until Config.PlanTimeout; an error marked
// permanent fails the plan at once. Tasks reach storage nodes through the
// Control service (controlpb). The other RUNNING plans wait, and show plan
// says for which (Service.waitingFor). plan interrupt marks the running
// task INTERRUPTED; plan execute makes it PENDING again. plan stop-service
// refuses, when created and again when its task runs, to leave a shard
// without a majority of running replicas unless given -force (quorum.go).
//
// # Snapshots
//
// snapshot create has each shard's leader write the shard's files, then
// has the node of each other replica copy and verify them, so every node
// can restore itself; copies that fail are recorded as missing, not fatal
// (snapshot.go; the files are drawn in internal/node/backup.go).
//
// # Storage health
//
// Every storage node reports its storage in Describe (NodeInfo.storage:
// ok, low-disk, read-only, corrupt or rebuilding, the directories of
// corrupt stores it set aside, its incidents). ping prints a node's state
// on its line when it is not ok, marks replicas that rebuild from their
// peers REBUILDING and exits 1; verify configuration makes a violation of
// corrupt, read-only and rebuilding storage and a warning of low disk
// space and of each aside directory (storage.go). The leader polls the
// nodes every 2 s and records each incident in show events once when new
// and once when resolved, keeping per node the last sequences recorded in
// Meta.StorageIncidents (incidents.go).
//
// # Elasticity
//
// A running store changes shape through topology candidates
// (handlers_elastic.go): topology clone copies the deployed topology
// (-current) or a candidate (-from); topology redistribute, rebalance,
// contract, change-repfactor, move-partition and split-partitions rewrite
// a candidate in place with the pure functions of internal/topology, reply
// with what changed (a summary of topology.Compare against the candidate
// as it was) and record it in show events. Each zone's replication factor
// is the zone's or, after change-repfactor, the candidate's
// (Topology.ZoneRFs). A candidate of more partitions is deployable only
// when made from the deployed topology (its shards keep their origins);
// topology create keeps the deployed count.
//
// topology preview over a deployed store (preview.go) lists a summary,
// Diff's lines and every partition move with its size: each source shard's
// nodes (its preferred leader's first) are asked Control.PartitionSizes, in
// the candidate's partition numbering, for at most 3 s each; a shard none
// of whose nodes answers has its moves shown as "size unknown". plan
// deploy-topology over a deployed store executes the changes
// (elastic_plan.go): new shards, replica changes (replica_plan.go), moves,
// splits, removed shards. plan migrate-sn (migrate_sn.go) replaces a node
// whose disk is gone; show rejoin-config (rejoin_config.go) lets a node
// that lost its root rejoin under its old id.
//
// # Concurrency
//
// Service is safe for concurrent use: commands arrive on gRPC goroutines;
// metadata updates from one node are serialized by metaStore's mutex, and
// updates from a deposed leader fail their version check. A Service on a
// replica that does not lead forwards commands to the leader. On the
// leader, one goroutine (incidentLoop) polls the nodes every 2 s, records
// their storage incidents and rebuilds replicas stuck for
// Config.RepairStuckAfter (repair_stuck.go); its marks are its own.
//
// # Commands
//
// Errors follow one rule for exit codes (service.go): a malformed value or
// a reference to something that does not exist is InvalidArgument (exit
// 2), a valid command that could not be done is FailedPrecondition (exit
// 1), no leader is Unavailable (exit 3).
//
// Commands (command.go) is the table of admin commands and their options,
// shared by the shell (internal/shell), which checks a command line
// before sending it, and Service, which runs it. Client sends commands:
// Call to the first of its nodes that answers, CallAt to one node.
package admin
