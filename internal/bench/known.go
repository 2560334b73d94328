package bench

import (
	"slices"
	"strings"
)

// prop describes one property the benchmark understands: its name, its
// default as YCSB (or, for cairn.*, Cairn) spells it, and one line of help.
// An empty def means "unset" (a computed default, or none).
type prop struct {
	name string
	def  string
	help string
}

// knownProps is the allow-list. A property that is not here, or an alias
// below, is an error naming the closest known name. Defaults are YCSB's
// unless the help says otherwise.
// appliesTo reports whether the property matters for a run with -db db:
// a property whose help starts "-db X:" applies to X only. Exports and
// reports record only the properties that apply.
func (kp prop) appliesTo(db string) bool {
	rest, ok := strings.CutPrefix(kp.help, "-db ")
	if !ok {
		return true
	}
	return strings.HasPrefix(rest, db+":")
}

var knownProps = []prop{
	// YCSB client.
	{"workload", "site.ycsb.workloads.CoreWorkload", "workload class; only CoreWorkload (site.ycsb or com.yahoo.ycsb) exists"},
	{"db", "cairn", "target: cairn (remote), embedded (in-process) or null (does nothing); also -db"},
	{"threadcount", "1", "client threads (goroutines); also -threads"},
	{"target", "0", "total target throughput in ops/s, 0 for as fast as possible; also -target"},
	{"maxexecutiontime", "0", "stop after this many seconds (0: no limit)"},
	{"status", "false", "print a status line to stderr every status.interval; also -s (on by default when stderr is a terminal)"},
	{"status.interval", "10", "seconds between status lines"},
	{"label", "", "prefix of each status line; also -l"},
	{"exportfile", "", "write the run's result document (JSON, internal/bench/result) to this file"},
	{"recordcount", "0", "records in the data set (must be set; YCSB treats 0 as 2^31-1)"},
	{"operationcount", "0", "operations of the run phase (0: until maxexecutiontime or interrupted)"},
	{"insertstart", "0", "first key number this client inserts (for loads split over clients)"},
	{"insertcount", "", "records this client inserts and requests (default recordcount - insertstart)"},
	{"measurementtype", "hdrhistogram", "latency measurement; only hdrhistogram"},
	{"measurement.interval", "", "latency from op start (op), from intended start (intended) or both; default op, both with -target"},
	{"hdrhistogram.percentiles", "50,95,99,99.9", "percentiles printed (YCSB's default is 50,95,99)"},
	// YCSB CoreWorkload.
	{"table", "usertable", "table name: the first major component of every key"},
	{"fieldcount", "10", "fields per record"},
	{"fieldlength", "100", "bytes per field (the maximum for uniform and zipfian lengths)"},
	{"minfieldlength", "1", "minimum bytes per field for uniform and zipfian lengths"},
	{"fieldlengthdistribution", "constant", "field length distribution: constant, uniform or zipfian"},
	{"fieldnameprefix", "field", "field names are this prefix and the field number"},
	{"readallfields", "true", "reads read every field (true) or one (false)"},
	{"readallfieldsbyname", "false", "name every field in a read of all fields"},
	{"writeallfields", "false", "updates write every field (true) or one (false)"},
	{"dataintegrity", "false", "values derived from key and field; every read verifies them (every load and run on the data set must use it too: a run without it writes random values that later checks report)"},
	{"readproportion", "0.95", "fraction of operations that read"},
	{"updateproportion", "0.05", "fraction of operations that update"},
	{"insertproportion", "0", "fraction of operations that insert"},
	{"scanproportion", "0", "fraction of operations that scan"},
	{"readmodifywriteproportion", "0", "fraction of operations that read, modify and write back"},
	{"requestdistribution", "uniform", "key choice: uniform, zipfian, latest, hotspot, sequential or exponential"},
	{"zeropadding", "1", "pad key numbers with zeros to this many digits"},
	{"minscanlength", "1", "fewest records a scan asks for"},
	{"maxscanlength", "1000", "most records a scan asks for"},
	{"scanlengthdistribution", "uniform", "scan length distribution: uniform or zipfian"},
	{"insertorder", "hashed", "key numbers hashed (hashed) or in order (ordered)"},
	{"hotspotdatafraction", "0.2", "fraction of the keys in the hot set (hotspot)"},
	{"hotspotopnfraction", "0.8", "fraction of operations on the hot set (hotspot)"},
	{"core_workload_insertion_retry_limit", "0", "retries of a failed insert"},
	{"core_workload_insertion_retry_interval", "3", "seconds between insert retries (randomised by +-20%)"},
	{"exponential.percentile", "95", "percent of exponential draws within exponential.frac of the keys"},
	{"exponential.frac", "0.8571428571", "fraction of the keys that exponential.percentile of draws fall in"},
	// Cairn.
	{"cairn.hosts", "127.0.0.1:5000", "-db cairn: host:port of the nodes, comma-separated"},
	{"cairn.store", "kvstore", "store name"},
	{"cairn.security", "", "-db cairn: login file of a secure store (TLS; as cairn lite --secure writes it); also -security FILE"},
	{"cairn.root", "", "-db embedded: the store's directory (as cairn lite --root); required"},
	{"cairn.partitions", "10", "-db embedded: partitions of a store created by the run"},
	{"cairn.durability", "write_no_sync", "write durability: sync, write_no_sync or no_sync"},
	{"cairn.consistency", "none_required", "read consistency: absolute or none_required"},
	{"cairn.layout", "value", "record layout: value (one value per record) or minor (one minor key per field)"},
	{"cairn.update", "merge", "value layout's update of some fields: merge (one put that merges the fields on the server) or rmw (a get, then a put-if-version)"},
	{"cairn.timeout", "5s", "timeout of each operation (Go duration)"},
	{"cairn.giveup", "30s", "stop the run when operations have failed and none has had an answer for this long (a store that went away: exit status 3 when no node answered); 0 never (Go duration)"},
	{"cairn.conns", "2", "-db cairn: gRPC connections per helper host (the one host of cairn lite)"},
	{"cairn.nodeconns", "1", "-db cairn: gRPC connections per node of a replicated store"},
	{"cairn.spreadreads", "false", "-db cairn, replicated store: send reads that any replica may serve round robin over a shard's replicas, not to the client's home replica"},
	{"cairn.unarycalls", "false", "-db cairn: make each call its own unary gRPC request instead of sending it on the connection's call stream"},
	{"cairn.callsocket", "true", "-db cairn: send calls on the node's call socket (a bare connection per concurrent call); false keeps them on the gRPC call stream"},
	{"cairn.seed", "1", "seed of the per-thread random sources (thread i uses stream i)"},
	{"cairn.cpuprofile", "", "write a Go CPU profile of this process over the measured phase to this file (go tool pprof)"},
}

// propAliases are accepted spellings of known properties, renamed on input.
var propAliases = map[string]string{
	"insertionretrylimit":    "core_workload_insertion_retry_limit",
	"insertionretryinterval": "core_workload_insertion_retry_interval",
}

var knownIndex = func() map[string]*prop {
	m := make(map[string]*prop, len(knownProps))
	for i := range knownProps {
		m[knownProps[i].name] = &knownProps[i]
	}
	return m
}()

// knownDefault returns the default of a known property.
func knownDefault(name string) string { return knownIndex[name].def }

// suggest returns the known property closest to name by edit distance, or ""
// if none is close enough to be a plausible typo.
func suggest(name string) string {
	best, bestD := "", 1<<30
	names := make([]string, 0, len(knownProps)+len(propAliases))
	for _, p := range knownProps {
		names = append(names, p.name)
	}
	for a := range propAliases {
		names = append(names, a)
	}
	slices.Sort(names)
	lname := strings.ToLower(name)
	for _, n := range names {
		if d := editDistance(lname, n); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD > max(2, len(name)/3) {
		return ""
	}
	if c, ok := propAliases[best]; ok {
		return c
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
