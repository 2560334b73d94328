# Cairn's build. `make demo` shows the store working; `make test` is what CI runs.
GO      ?= go
BIN     := bin/cairn
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
FUZZTIME ?= 30000x
CHAOS_TIME ?= 10m
CHAOS_STORAGE_TIME ?= 60s

.PHONY: build test test-go test-python test-java fuzz-short fuzz proto demo vet lint-proto clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cairn

vet:
	$(GO) vet ./...

# buf lint of the public wire contract (buf.yaml says which rules and why).
lint-proto:
	./scripts/buf-lint.sh

# The whole suite CI runs: vet, unit and end-to-end tests (real processes on
# 127.0.0.1), and each fuzz target briefly.
test: vet lint-proto test-go test-python test-java fuzz-short

test-go: build
	@command -v chromium >/dev/null 2>&1 || echo "note: chromium is not installed, so the HTML report test is skipped (apt-get install chromium; .ci/run does)"
	GO=$(GO) CAIRN_BIN=$(abspath $(BIN)) ./scripts/test-go.sh -count=1 -timeout 10m ./test/e2e/ ./test/robustness/ ./...

# The Python client (clients/python) installed into a venv (CAIRN_PY_VENV,
# default .venv-python), type-checked by mypy, and its pytest suite against a real cairn lite and a
# 3-node cluster started from $(BIN). Under a minute.
CAIRN_PY_VENV ?= $(abspath .venv-python)
PYTHON ?= python3

test-python: build
	@test -x $(CAIRN_PY_VENV)/bin/pip || $(PYTHON) -m venv $(CAIRN_PY_VENV) || { \
		echo "python3 -m venv failed: apt-get install python3-venv (.ci/run does)" >&2; exit 1; }
	$(CAIRN_PY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check './clients/python[test]'
	cd clients/python && $(CAIRN_PY_VENV)/bin/python -m mypy --no-error-summary cairn
	CAIRN_BIN=$(abspath $(BIN)) $(CAIRN_PY_VENV)/bin/python -m pytest -q -p no:cacheprovider clients/python/tests

# The Java client (clients/java/client) and the YCSB binding
# (clients/java/ycsb): their JUnit suites against a real cairn lite and a
# 3-node cluster started from $(BIN), offline (.ci/run primes the local
# Maven repository with `make java-deps`). About 30 s.
MVN ?= mvn
test-java: build
	CAIRN_BIN=$(abspath $(BIN)) $(MVN) -B -ntp -o -f clients/java -pl client,ycsb verify -Dcairn.bin=$(abspath $(BIN))

# Downloads what the Java build needs into the local Maven repository
# (online): a verify that runs only the tests that need no cairn process
# pulls the compiler, surefire and its JUnit provider, site.ycsb:core and
# every other dependency, and the plugins the ycsb module runs at package.
.PHONY: java-deps
java-deps:
	$(MVN) -q -f clients/java -pl client,ycsb verify -Dtest='KeyTest,RecordCodecTest' -Dsurefire.failIfNoSpecifiedTests=false

fuzz-short:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# Longer fuzzing: make fuzz FUZZTIME=5m
fuzz:
	FUZZTIME=$(if $(filter 30000x,$(FUZZTIME)),2m,$(FUZZTIME)) ./scripts/fuzz.sh

proto:
	./scripts/proto.sh

demo:
	@echo "== building $(BIN) (the first build downloads Go modules and compiles every package: a few minutes; packages are listed as they compile)"
	$(GO) build -v -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cairn
	./scripts/demo.sh $(BIN)

# A 300 MiB shard is caught up by snapshot, backed up, copied and restored
# by nodes whose peak RSS must stay under 150 MiB (TestSnapshotBoundedMemory;
# make test runs it with a 128 MiB shard). About a minute.
.PHONY: test-snapmem
test-snapmem: build
	CAIRN_BIN=$(abspath $(BIN)) CAIRN_SNAPMEM_MB=300 CAIRN_SNAPMEM_RSS_MB=150 \
		$(GO) test -count=1 -timeout 10m -run '^TestSnapshotBoundedMemory$$' -v ./test/e2e/

# The robustness tests (test/robustness) in a loop with random seeds until
# the first failure, which prints the seed and the command to reproduce it:
# make chaos CHAOS_TIME=1h (CHAOS_RUN=TestName for one test; CHAOS_STORAGE_TIME
# is how long each run of TestStorageFaultsUnderLoad injects faults).
# TestMoveFaults runs its six faults during partition moves and
# TestReplicaFaults its seven during replica changes each round (make test
# runs one of each, picked by the seed): CHAOS_RUN=TestMoveFaults for those.
.PHONY: chaos
chaos: build
	CAIRN_BIN=$(abspath $(BIN)) CHAOS_TIME=$(CHAOS_TIME) CHAOS_STORAGE_TIME=$(CHAOS_STORAGE_TIME) ./scripts/chaos.sh

# Elasticity end to end (issue 10): the white paper's store grown to six
# nodes, shrunk back and split, under load (about 3 minutes); make test runs
# the growth only.
.PHONY: elastic
elastic: build
	CAIRN_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 15m ./test/e2e/ -run '^TestElasticUnderLoad$$' -v -elastic.all

# Acceptances 1 and 2 of issue 10 as an operator runs them: the white
# paper's store with 100,000 records grown to 6 nodes and shrunk back under
# cairn bench workload A with dataintegrity=true; prints each phase's time
# and the workload's throughput during it as a fraction of the steady one
# (results/elastic/). About 6 minutes; see scripts/elastic-bench.sh.
.PHONY: elastic-bench
elastic-bench: build
	BIN=$(BIN) ./scripts/elastic-bench.sh

# Replica moves end to end (issue 10, acceptance 5): change-repfactor 3 -> 5,
# migrate-sn of a node hosting an admin, rebalance off a node, under load
# (about 30 s; make test runs TestReplaceFailedNode, the short variant).
.PHONY: replicas
replicas: build
	CAIRN_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 10m ./test/e2e/ -run '^(TestReplicaChangesLong|TestReplaceFailedNode)$$' -v -replicas.long

# YCSB workloads A, B, C x zipfian, uniform against cairn lite over loopback
# and embedded in the benchmark process, a fresh store for each: results/
# (JSON, summary.tsv, report.html). About 8 minutes; DURATION=60 for longer
# runs, see scripts/bench-lite.sh for the other knobs. docs/benchmarks.md.
.PHONY: bench-lite bench-null
bench-lite: build
	BIN=$(BIN) ./scripts/bench-lite.sh

# The generator alone (-db null, workload A, 16 threads, 1 KB records, 20 s
# per distribution): its throughput, then the Go benchmark of one
# operation's cost and allocations.
bench-null: build
	for d in zipfian uniform; do \
		$(BIN) bench run -db null -P workloads/workloada -p recordcount=100000 -p fieldcount=10 \
			-p fieldlength=100 -p requestdistribution=$$d -p operationcount=0 -p maxexecutiontime=20 -threads 16 || exit 1; \
	done
	$(GO) test -run '^$$' -bench 'WorkloadAOpNull' -benchtime 3s -count 3 ./internal/bench/

# Workloads A and C (zipfian, 1 KB records) against cairn lite and a 3-node
# RF=3 cluster, with SYNC and with WRITE_NO_SYNC: results/replication/.
.PHONY: bench-replication
bench-replication: build
	BIN=$(BIN) ./scripts/bench-replication.sh

# What secure mode costs: cairn lite plain and --secure (TLS, login, token
# checks) alternating, workloads C and A, pinned: results/secure/.
.PHONY: bench-secure
bench-secure: build
	BIN=$(BIN) ./scripts/bench-secure.sh

clean:
	rm -rf bin

# The real YCSB 0.17.0 (site.ycsb.Client) with Cairn's binding
# (clients/java/ycsb) against a fresh cairn lite: Maven builds the Java client
# and the binding, then YCSB loads RECORDS records (default 100,000 x 1 KB)
# and runs workload A (OPS operations, THREADS threads, LAYOUT value|minor),
# printing YCSB's own report. Lite on core 0, the JVM on core 1 (taskset).
.PHONY: ycsb ycsb-bench
ycsb: build
	BIN=$(BIN) ./scripts/ycsb.sh

# YCSB with the binding against cairn bench on one store, workload A, 8
# threads, runs alternating (bench, ycsb, ...): throughput ratio and CPU per
# operation of each client and of the server (docs/benchmarks.md, "YCSB binding").
ycsb-bench: build
	BIN=$(BIN) ./scripts/ycsb-vs-bench.sh

# The real YCSB 0.17.0 client against Cairn lite (layout minor), Redis (its
# own redis-server, AOF everysec; Debian's redis-server is installed if
# missing) and, with KVSTORE_JAR=path/to/kvstore.jar, Oracle NoSQL KVLite:
# same client, record layout and pinning (servers core 0, JVM core 1),
# stores alternating within each phase (load, A, B, C). Prints ops/s, p99,
# server and client CPU per op: results/peers/. Knobs RECORDS, OPS,
# THREADS, REPS, PHASES, PIN, KVSTORE_JAR; DURABLE=1 for the durable load
# (Cairn sync vs Redis appendfsync always). docs/benchmarks.md,
# scripts/bench-peers.sh.
.PHONY: bench-peers
bench-peers: build
	BIN=$(BIN) ./scripts/bench-peers.sh

# Oracle NoSQL KVLite (kvstore.jar) built from its sources, for bench-peers'
# KVSTORE_JAR: make kvlite-jar KVLITE_SRC=<clone, bare mirror or URL of
# github.com/oracle/nosql>. Output: results/kvlite/lib/kvstore.jar.
.PHONY: kvlite-jar
kvlite-jar:
	./scripts/build-kvlite.sh "$(KVLITE_SRC)"
