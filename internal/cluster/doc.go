// Package cluster runs a whole Cairn store on one machine: it lays out the
// store's topology, starts one `cairn sn` process per storage node as a
// detached background process, and later finds, inspects, signals and stops
// those processes. It is what `cairn cluster start|stop|status|kill` does
// (cmd/cairn/cluster.go only parses flags), and it is the harness of the
// end-to-end cluster tests. It stands in for an admin service until there is
// one: nothing here is replicated, and cluster.json is only meaningful on
// the machine that wrote it.
//
// # Directory layout
//
//	DIR/cluster.json     the cluster file (below); written atomically
//	DIR/cluster.lock     flock'ed by start, stop and kill, so two of them
//	                     never race on the processes or on cluster.json
//	DIR/nI/              storage node I's root (I = 1, 2, ...)
//	DIR/nI/topology.json the store's topology (identical in every node), a
//	                     checked file (package storage/files), as every
//	                     node's own files are
//	DIR/nI/data/         the node's engine
//	DIR/nI/sn.log        the node's stdout and stderr, appended across
//	                     restarts; each start first appends a line
//	                     "--- cairn cluster: starting node I ... ---"
//
// # cluster.json
//
// One JSON object, indented:
//
//	{
//	  "format": 1,                 // this layout; Load refuses others
//	  "store": "kvstore",          // the store's name
//	  "partitions": 100,           // fixed at creation, as in topology.json
//	  "shards": 2,                 //   "
//	  "rf": 3,                     // replication factor
//	  "host": "127.0.0.1",         // every node listens on this host
//	  "sn_flags": ["--raft-tick=50ms"], // passed to every `cairn sn`
//	  "nodes": [
//	    {"id": 1, "addr": "127.0.0.1:40001",
//	     "root": "/abs/DIR/n1",    // absolute; the --root of the process
//	     "pid": 12345}             // the last process started; 0: none
//	  ]
//	}
//
// The topology itself lives in each node's topology.json; cluster.json
// repeats the counts so that a restart can refuse flags that disagree. A
// pid is only a hint: a process counts as the node's only while it is
// alive (not a zombie) and its /proc/PID/cmdline holds the argument "sn"
// and "--root" with the node's root. A pid that names a dead process or
// someone else's (a reused pid) is stale and is never signalled.
//
// sn_flags are replaced by the flags of a start that gives any (so that a
// restarted node runs with the same Raft tick as its peers unless asked
// otherwise) and kept otherwise.
//
// # Health
//
// A node is up when it answers StoreInfo. A shard's leader is the leader
// named, at the highest term, by any replica that answers; the shard is led
// when that node answers too and says it leads at that term. So a node that
// was paused (SIGSTOP) and still believes it leads an older term does not
// count. Start waits until every shard is led; Status is healthy when every
// node is up and every shard is led.
//
// # Processes
//
// Each node is started with Setsid, so it has its own session and process
// group: it survives the command that started it, and a Ctrl-C in that
// command's terminal does not reach it. Its stdin is /dev/null. Stop sends
// SIGTERM (and SIGCONT, so a paused node can act on it), waits up to
// StopTimeout for the process to vanish, then sends SIGKILL. A node's
// process is not a child of the command that stops it, so exits are
// observed by polling /proc with a deadline. Process inspection needs
// Linux's /proc; elsewhere any live pid is taken to be the node's.
//
// # Concurrency
//
// Start, Stop and Kill take DIR/cluster.lock (non-blocking: a second one
// fails at once, naming the lock). Status takes no lock and may run at any
// time. Each function is safe to call from one goroutine at a time per
// Options value.
//
// # Example
//
//	err := cluster.Start(ctx, cluster.StartOptions{
//		Root: "/tmp/c", Spec: cluster.DefaultSpec(), Binary: exe, Out: os.Stdout,
//	})
//	st, err := cluster.GetStatus(ctx, "/tmp/c")
//	fmt.Print(st.Text())
//	err = cluster.Stop(ctx, cluster.StopOptions{Root: "/tmp/c", Out: os.Stdout})
package cluster
