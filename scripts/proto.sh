#!/usr/bin/env bash
# Regenerates the committed protobuf and gRPC code with the Go plugins and
# the protoc pinned below.
#
# protoc comes from PyPI's grpcio-tools, which bundles a protoc new enough
# for editions (api/cairnpb uses edition 2023 so the protobuf runtime does
# not reject invalid UTF-8 before Cairn's handlers can answer it; see
# kv.proto). It is installed once into a virtualenv under the user's cache
# directory (CAIRN_PROTOC_VENV overrides the path); Debian's protoc (3.21) is
# too old for editions.
set -euo pipefail
cd "$(dirname "$0")/.."

GRPCIO_TOOLS_VERSION=1.85.1 # bundles libprotoc 35.1
PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.5.1

venv="${CAIRN_PROTOC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/protoc-grpcio-tools-$GRPCIO_TOOLS_VERSION}"
if ! "$venv/bin/python" -c 'import grpc_tools.protoc' 2>/dev/null; then
  command -v python3 >/dev/null || { echo "python3 missing: apt-get install python3 python3-venv" >&2; exit 1; }
  echo "installing grpcio-tools==$GRPCIO_TOOLS_VERSION into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "grpcio-tools==$GRPCIO_TOOLS_VERSION"
fi
# The well-known types (descriptor.proto, go_features.proto, ...) ship inside
# the grpc_tools package.
wkt="$("$venv/bin/python" -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
protoc() { "$venv/bin/python" -m grpc_tools.protoc -I "$wkt" "$@"; }

export PATH="$(go env GOPATH)/bin:$PATH"
go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO_VERSION"
go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC_VERSION"
echo "protoc: $(protoc --version)" >&2

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
# The Python client's stubs (clients/python/cairn/_pb). protoc's Python
# plugin writes `import kv_pb2` in the gRPC module; it is made
# package-relative so the stubs import as cairn._pb.
py_out=clients/python/cairn/_pb
mkdir -p "$py_out"
protoc -I api/cairnpb --python_out="$py_out" --pyi_out="$py_out" --grpc_python_out="$py_out" \
  api/cairnpb/kv.proto
sed -i 's/^import kv_pb2 as kv__pb2$/from . import kv_pb2 as kv__pb2/' "$py_out/kv_pb2_grpc.py"
