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
# The Java client's message classes and gRPC stubs, for kv.proto only (the
# package comes from its java_package option: io.cairndb.kv.proto).
# grpcio-tools' protoc carries only the Python generators, so the Java ones
# run in protoc 4.35.1 from Maven Central (libprotoc 35.1, the same as
# grpcio-tools bundles) with grpc-java's plugin: prebuilt binaries fetched
# once into the cache and checked against their pinned sha256.
PROTOC_JAVA_VERSION=4.35.1
PROTOC_JAVA_SHA256=d2c65c3ea5eeb59427f684ed3e0a0cd458386122fc9f1b98de946a7242b53d31
GRPC_JAVA_VERSION=1.79.0 # the newest whose linux-x86_64 plugin is served; its stubs run on grpc-java 1.85
GRPC_JAVA_SHA256=3d16b70b18854988b29c41e20d06ca3358c47008edb9e6986b926c5bca790816
maven_exe() { # group/path artifact version sha256: prints the cached binary's path
  local exe="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/$2-$3"
  if ! echo "$4  $exe" | sha256sum -c --quiet >/dev/null 2>&1; then
    echo "downloading $2 $3 into $exe" >&2
    mkdir -p "$(dirname "$exe")"
    curl -sSfL -o "$exe.tmp" "https://repo1.maven.org/maven2/$1/$2/$3/$2-$3-linux-x86_64.exe"
    echo "$4  $exe.tmp" | sha256sum -c --quiet >&2 || { echo "$2 $3: sha256 mismatch" >&2; exit 1; }
    chmod +x "$exe.tmp" && mv "$exe.tmp" "$exe"
  fi
  echo "$exe"
}
protoc_java="$(maven_exe com/google/protobuf protoc "$PROTOC_JAVA_VERSION" "$PROTOC_JAVA_SHA256")"
grpc_java="$(maven_exe io/grpc protoc-gen-grpc-java "$GRPC_JAVA_VERSION" "$GRPC_JAVA_SHA256")"
java_out=clients/java/client/src/main/java
rm -rf "$java_out/io/cairndb/kv/proto"
mkdir -p "$java_out"
"$protoc_java" -I . -I "$wkt" --plugin=protoc-gen-grpc-java="$grpc_java" \
  --java_out="$java_out" --grpc-java_out="$java_out" api/cairnpb/kv.proto
