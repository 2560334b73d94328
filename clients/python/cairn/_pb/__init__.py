"""Generated from api/cairnpb/kv.proto by scripts/proto.sh; do not edit."""
