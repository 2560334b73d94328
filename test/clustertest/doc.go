// Package clustertest runs a replicated Cairn store of real `cairn sn`
// processes for robustness tests, injects faults into it, and records and
// checks what clients saw.
//
// # Clusters
//
// Start writes a topology of Options.Nodes nodes on free 127.0.0.1 ports
// (each node's root in t.TempDir()), starts one `cairn sn` per node and
// returns once every node printed its ready line and every shard is led by
// its preferred replica, so the cluster is in a steady state. Faults are
// real: Kill sends SIGKILL, Stop and Cont send SIGSTOP and SIGCONT, Restart
// starts a node again on its root, WipeAndRestart deletes the node's data
// directory (ROOT/data; topology.json and everything else in ROOT stay)
// before it starts again. RestartWithEnv starts one run with extra
// environment (CAIRN_FAULTS injects storage faults) and reports whether it
// became ready; Node.ExitCode and Node.RunLog tell how that run ended.
// MountTmpfs (root only) gives a small real file system, and MoveDataTo
// moves a stopped node's data onto it, so that its disk can be filled.
//
// With Options.Deployed, the store is made as an operator makes it: `cairn
// sn init` and `cairn sn start` per node, then the admin shell deploys the
// nodes, an admin on each, and a topology of Options.Shards shards, so
// plans run (Admin, AdminOn run `cairn admin` commands; ShownTopology reads
// the deployed topology; ShardTable and LeaderTable read a shard's
// partition table on its leader; TopologySeq the topology a node runs).
// Options.Env adds environment to every run of every node (failpoints).
// Options.Spare nodes (the highest ids) are deployed too, with the same
// capacity, but host nothing and run no admin: a plan moves replicas onto
// them.
//
// With Options.Proxies, every node reaches every other node through a TCP
// proxy of its own (`--peer ID=PROXY` on the sn command line), one per
// ordered pair: the proxy (a, b) carries the Raft traffic a sends to b (the
// transport opens one stream per ordered pair and never answers on it), and
// every call a makes to b outside Raft (a partition mover's, the admin's,
// a forwarded admin command), with its answer: once the topology lists b,
// a dials b's proxy for b's address. Cut(a, b) stops a's traffic to b: the proxy closes its
// connections and closes every new one at once, like a firewall that
// rejects. CutBetween(a, b) cuts both directions, Isolate(n) every link
// from and to n; Heal reopens all.
// Clients never go through proxies: they use the topology's addresses, so a
// node cut off from its peers still serves the clients that reach it.
//
// Every wait has a deadline; conditions on other processes are polled
// (pollInterval), never slept for. Every node's output (all of its runs) is
// logged when the test fails and written to the artifact directory.
//
// # Histories and checks
//
// A History records operations with their invocation and return times on
// one monotonic clock and their outcome: OK, Failed (certainly not applied,
// or a read that returned nothing) or Unknown (a write that may or may not
// have been applied). CheckLinearizable checks it against a register per
// key with porcupine; an Unknown write is given an infinite return time and
// no observed output, so it may take effect at any point after its call, or
// never. CheckFinal checks that final reads show every acknowledged write.
//
// # The binary
//
// Main, called from a test package's TestMain, uses $CAIRN_BIN or builds
// ./cmd/cairn once into a temporary directory.
//
// # Concurrency
//
// A Cluster's methods may be called from the test goroutine and from
// workload goroutines; fault injection (Kill, Stop, Cut, ...) should come
// from one goroutine at a time. A History is safe for concurrent use.
//
// # Example
//
//	func TestMain(m *testing.M) { clustertest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := clustertest.Start(t, clustertest.Options{Nodes: 3, Shards: 1, Proxies: true})
//		lead := c.WaitLeader(1, 10*time.Second)
//		c.Isolate(lead)
//		c.WaitLeaderNot(1, lead, 10*time.Second)
//		c.Heal()
//	}
package clustertest
