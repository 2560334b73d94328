# Cairn's build. `make demo` shows the store working; `make test` is what CI runs.
GO      ?= go
BIN     := bin/cairn
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
FUZZTIME ?= 5s

.PHONY: build test test-go fuzz-short fuzz proto demo vet clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cairn

vet:
	$(GO) vet ./...

# The whole suite CI runs: vet, unit and end-to-end tests (real processes on
# 127.0.0.1), and each fuzz target briefly.
test: vet test-go fuzz-short

test-go: build
	CAIRN_BIN=$(abspath $(BIN)) $(GO) test -count=1 -timeout 10m ./...

fuzz-short:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# Longer fuzzing: make fuzz FUZZTIME=5m
fuzz:
	FUZZTIME=$(if $(filter 5s,$(FUZZTIME)),2m,$(FUZZTIME)) ./scripts/fuzz.sh

proto:
	./scripts/proto.sh

demo: build
	./scripts/demo.sh $(BIN)

clean:
	rm -rf bin
