#!/usr/bin/env bash
# build-kvlite.sh: Oracle NoSQL Database's kvstore.jar (which runs KVLite),
# built from source for `make bench-peers KVSTORE_JAR=...`. KVLite is not on
# Maven Central; its sources are (github.com/oracle/nosql), and its Maven
# dependencies are.
#
#   scripts/build-kvlite.sh SRC
#   make bench-peers KVSTORE_JAR=results/kvlite/lib/kvstore.jar
#
# SRC is a clone of github.com/oracle/nosql, a bare mirror of it, or its
# URL. The script clones it into OUT/nosql (kept between runs; REV picks the
# commit), builds it with `mvn install -pl kvmain,kvstore -am -DskipTests`
# (the kvstore module's jar holds kvmain's classes too), and puts that jar
# in OUT/lib/kvstore.jar with its runtime dependencies beside it: the jar's
# manifest names them by file name, so `java -jar OUT/lib/kvstore.jar
# kvlite ...` runs with no classpath. It then starts KVLite once from there
# on a random port (and the few after it, which KVLite also takes), waits
# for "Created new kvlite store", and stops it.
#
# (The kvstore pom configures maven-dependency-plugin's outputDirectory for
# its own unpacking, which also overrides copy-dependencies' -DoutputDirectory;
# so the script asks for the classpath, build-classpath, and copies the jars
# itself.)
#
# Environment (default): OUT (results/kvlite), REV (the clone's HEAD),
# MVN (mvn), MVN_FLAGS (-B -q -Dstyle.color=never), START_SECONDS (120: how
# long KVLite may take to create its store). On this 2-core machine the build
# took 51-68 s with a primed ~/.m2, and KVLite started in about 6 s.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${1:?usage: scripts/build-kvlite.sh SRC (a clone, bare mirror or URL of github.com/oracle/nosql)}
OUT=${OUT:-results/kvlite}
MVN=${MVN:-mvn}
read -ra mvn_flags <<<"${MVN_FLAGS:--B -q -Dstyle.color=never}"
START_SECONDS=${START_SECONDS:-120}
die() { echo "build-kvlite: $*" >&2; exit 1; }
for tool in git java jar "$MVN"; do command -v "$tool" >/dev/null || die "$tool is needed"; done

mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")
src="$OUT/nosql"
if [ ! -d "$src/.git" ]; then
  echo "== cloning $SRC into $src"
  git clone -q "$SRC" "$src" || die "cannot clone $SRC"
fi
if [ -n "${REV:-}" ]; then git -C "$src" checkout -q "$REV" || die "no commit $REV in $src"; fi
[ -f "$src/kvstore/pom.xml" ] || die "$src has no kvstore/pom.xml: is $SRC github.com/oracle/nosql?"
version=$(sed -n 's|^  <version>\(.*\)</version>|\1|p' "$src/pom.xml" | head -1)
echo "== building Oracle NoSQL $version at $(git -C "$src" rev-parse --short HEAD) (mvn install -pl kvmain,kvstore -am)"
t0=$SECONDS
(cd "$src" && "$MVN" "${mvn_flags[@]}" install -pl kvmain,kvstore -am -DskipTests) || die "the Maven build failed"
echo "== built in $((SECONDS - t0)) s"

jar="$src/kvstore/target/kvstore-$version.jar"
[ -f "$jar" ] || die "the build made no $jar"
rm -rf "$OUT/lib" && mkdir -p "$OUT/lib"
cp "$jar" "$OUT/lib/kvstore.jar"
(cd "$src" && "$MVN" "${mvn_flags[@]}" dependency:build-classpath -pl kvstore -Dmdep.includeScope=runtime \
  -Dmdep.outputFile="$OUT/classpath.txt") || die "Maven could not list kvstore's runtime dependencies"
# The jars the manifest's Class-Path names (72-byte lines, continued after a
# space); the build's classpath has them, among others the jar holds already.
tmp=$(mktemp -d)
(cd "$tmp" && jar --extract --file "$OUT/lib/kvstore.jar" META-INF/MANIFEST.MF) || die "cannot read the manifest of $jar"
named=$(tr -d '\r' <"$tmp/META-INF/MANIFEST.MF" | awk '/^Class-Path:/ {on = 1; sub(/^Class-Path: /, ""); printf "%s", $0; next}
  on && /^ / {sub(/^ /, ""); printf "%s", $0; next} {on = 0}')
rm -rf "$tmp"
tr ':' '\n' <"$OUT/classpath.txt" | while read -r dep || [ -n "$dep" ]; do
  case " $named " in *" $(basename "$dep") "*) cp "$dep" "$OUT/lib/" ;; esac
done
n=$(($(find "$OUT/lib" -name '*.jar' | wc -l) - 1))
echo "== $OUT/lib/kvstore.jar and the $n dependency jars its manifest names"

# Start it once: the jar, its manifest's classpath and the JVM agree.
root=$(mktemp -d -t cairn-kvlite-check.XXXXXX)
port=$((20000 + RANDOM % 30000))
java -jar "$OUT/lib/kvstore.jar" kvlite -root "$root/root" -store kvstore -host localhost -port "$port" \
  -secure-config disable >"$root/kvlite.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; rm -rf "$root"' EXIT
for _ in $(seq $((START_SECONDS * 10))); do
  grep -q 'Created new kvlite store' "$root/kvlite.log" && break
  kill -0 "$pid" 2>/dev/null ||
    { cat "$root/kvlite.log" >&2; die "KVLite exited before it created its store (port $port or the next few taken? run again)"; }
  sleep 0.1
done
grep -q 'Created new kvlite store' "$root/kvlite.log" ||
  { tail -20 "$root/kvlite.log" >&2; die "KVLite did not create its store within $START_SECONDS s"; }
echo "== KVLite $version starts: java -jar $OUT/lib/kvstore.jar kvlite ... (port $port)"
echo "   make bench-peers KVSTORE_JAR=$OUT/lib/kvstore.jar"
