#!/usr/bin/env bash
# Regenerates the committed protobuf and gRPC code. Needs protoc (Debian's
# protobuf-compiler) and the Go plugins pinned below.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$(go env GOPATH)/bin:$PATH"
command -v protoc >/dev/null || { echo "protoc missing: apt-get install protobuf-compiler" >&2; exit 1; }
go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
protoc -I . --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  api/cairnpb/kv.proto api/cairnpb/admin.proto
protoc -I . --go_out=. --go_opt=paths=source_relative \
  internal/storage/commandpb/command.proto
protoc -I . --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  internal/transport/transportpb/transport.proto
protoc -I . --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  internal/admin/controlpb/control.proto
