from google.protobuf import any_pb2 as _any_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SyncPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNC_POLICY_UNSPECIFIED: _ClassVar[SyncPolicy]
    SYNC_POLICY_SYNC: _ClassVar[SyncPolicy]
    SYNC_POLICY_WRITE_NO_SYNC: _ClassVar[SyncPolicy]
    SYNC_POLICY_NO_SYNC: _ClassVar[SyncPolicy]

class ReplicaAckPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPLICA_ACK_POLICY_UNSPECIFIED: _ClassVar[ReplicaAckPolicy]
    REPLICA_ACK_POLICY_ALL: _ClassVar[ReplicaAckPolicy]
    REPLICA_ACK_POLICY_SIMPLE_MAJORITY: _ClassVar[ReplicaAckPolicy]
    REPLICA_ACK_POLICY_NONE: _ClassVar[ReplicaAckPolicy]

class ConsistencyKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONSISTENCY_KIND_UNSPECIFIED: _ClassVar[ConsistencyKind]
    CONSISTENCY_KIND_ABSOLUTE: _ClassVar[ConsistencyKind]
    CONSISTENCY_KIND_NONE_REQUIRED: _ClassVar[ConsistencyKind]
    CONSISTENCY_KIND_TIME_LAG: _ClassVar[ConsistencyKind]
    CONSISTENCY_KIND_VERSION: _ClassVar[ConsistencyKind]

class ReturnValueVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETURN_VALUE_VERSION_UNSPECIFIED: _ClassVar[ReturnValueVersion]
    RETURN_VALUE_VERSION_NONE: _ClassVar[ReturnValueVersion]
    RETURN_VALUE_VERSION_VALUE: _ClassVar[ReturnValueVersion]
    RETURN_VALUE_VERSION_VERSION: _ClassVar[ReturnValueVersion]
    RETURN_VALUE_VERSION_ALL: _ClassVar[ReturnValueVersion]

class Depth(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DEPTH_UNSPECIFIED: _ClassVar[Depth]
    DEPTH_CHILDREN_ONLY: _ClassVar[Depth]
    DEPTH_PARENT_AND_CHILDREN: _ClassVar[Depth]
    DEPTH_DESCENDANTS_ONLY: _ClassVar[Depth]
    DEPTH_PARENT_AND_DESCENDANTS: _ClassVar[Depth]

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_FORWARD: _ClassVar[Direction]
    DIRECTION_REVERSE: _ClassVar[Direction]
    DIRECTION_UNORDERED: _ClassVar[Direction]

class Condition(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONDITION_UNSPECIFIED: _ClassVar[Condition]
    CONDITION_IF_ABSENT: _ClassVar[Condition]
    CONDITION_IF_PRESENT: _ClassVar[Condition]
    CONDITION_IF_VERSION: _ClassVar[Condition]
SYNC_POLICY_UNSPECIFIED: SyncPolicy
SYNC_POLICY_SYNC: SyncPolicy
SYNC_POLICY_WRITE_NO_SYNC: SyncPolicy
SYNC_POLICY_NO_SYNC: SyncPolicy
REPLICA_ACK_POLICY_UNSPECIFIED: ReplicaAckPolicy
REPLICA_ACK_POLICY_ALL: ReplicaAckPolicy
REPLICA_ACK_POLICY_SIMPLE_MAJORITY: ReplicaAckPolicy
REPLICA_ACK_POLICY_NONE: ReplicaAckPolicy
CONSISTENCY_KIND_UNSPECIFIED: ConsistencyKind
CONSISTENCY_KIND_ABSOLUTE: ConsistencyKind
CONSISTENCY_KIND_NONE_REQUIRED: ConsistencyKind
CONSISTENCY_KIND_TIME_LAG: ConsistencyKind
CONSISTENCY_KIND_VERSION: ConsistencyKind
RETURN_VALUE_VERSION_UNSPECIFIED: ReturnValueVersion
RETURN_VALUE_VERSION_NONE: ReturnValueVersion
RETURN_VALUE_VERSION_VALUE: ReturnValueVersion
RETURN_VALUE_VERSION_VERSION: ReturnValueVersion
RETURN_VALUE_VERSION_ALL: ReturnValueVersion
DEPTH_UNSPECIFIED: Depth
DEPTH_CHILDREN_ONLY: Depth
DEPTH_PARENT_AND_CHILDREN: Depth
DEPTH_DESCENDANTS_ONLY: Depth
DEPTH_PARENT_AND_DESCENDANTS: Depth
DIRECTION_UNSPECIFIED: Direction
DIRECTION_FORWARD: Direction
DIRECTION_REVERSE: Direction
DIRECTION_UNORDERED: Direction
CONDITION_UNSPECIFIED: Condition
CONDITION_IF_ABSENT: Condition
CONDITION_IF_PRESENT: Condition
CONDITION_IF_VERSION: Condition

class Key(_message.Message):
    __slots__ = ("major", "minor")
    MAJOR_FIELD_NUMBER: _ClassVar[int]
    MINOR_FIELD_NUMBER: _ClassVar[int]
    major: _containers.RepeatedScalarFieldContainer[str]
    minor: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, major: _Optional[_Iterable[str]] = ..., minor: _Optional[_Iterable[str]] = ...) -> None: ...

class Durability(_message.Message):
    __slots__ = ("master_sync", "replica_sync", "replica_ack")
    MASTER_SYNC_FIELD_NUMBER: _ClassVar[int]
    REPLICA_SYNC_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ACK_FIELD_NUMBER: _ClassVar[int]
    master_sync: SyncPolicy
    replica_sync: SyncPolicy
    replica_ack: ReplicaAckPolicy
    def __init__(self, master_sync: _Optional[_Union[SyncPolicy, str]] = ..., replica_sync: _Optional[_Union[SyncPolicy, str]] = ..., replica_ack: _Optional[_Union[ReplicaAckPolicy, str]] = ...) -> None: ...

class Consistency(_message.Message):
    __slots__ = ("kind", "permissible_lag_ms", "version", "timeout_ms")
    KIND_FIELD_NUMBER: _ClassVar[int]
    PERMISSIBLE_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    kind: ConsistencyKind
    permissible_lag_ms: int
    version: bytes
    timeout_ms: int
    def __init__(self, kind: _Optional[_Union[ConsistencyKind, str]] = ..., permissible_lag_ms: _Optional[int] = ..., version: _Optional[bytes] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class KeyRange(_message.Message):
    __slots__ = ("has_start", "start", "start_inclusive", "has_end", "end", "end_inclusive", "has_prefix", "prefix")
    HAS_START_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    START_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    HAS_END_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    END_INCLUSIVE_FIELD_NUMBER: _ClassVar[int]
    HAS_PREFIX_FIELD_NUMBER: _ClassVar[int]
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    has_start: bool
    start: str
    start_inclusive: bool
    has_end: bool
    end: str
    end_inclusive: bool
    has_prefix: bool
    prefix: str
    def __init__(self, has_start: _Optional[bool] = ..., start: _Optional[str] = ..., start_inclusive: _Optional[bool] = ..., has_end: _Optional[bool] = ..., end: _Optional[str] = ..., end_inclusive: _Optional[bool] = ..., has_prefix: _Optional[bool] = ..., prefix: _Optional[str] = ...) -> None: ...

class Record(_message.Message):
    __slots__ = ("key", "value", "version", "expiration_ms")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPIRATION_MS_FIELD_NUMBER: _ClassVar[int]
    key: Key
    value: bytes
    version: bytes
    expiration_ms: int
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ..., value: _Optional[bytes] = ..., version: _Optional[bytes] = ..., expiration_ms: _Optional[int] = ...) -> None: ...

class PutOp(_message.Message):
    __slots__ = ("key", "value", "condition", "match_version", "ttl_ms", "merge_fields")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    MATCH_VERSION_FIELD_NUMBER: _ClassVar[int]
    RETURN_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    MERGE_FIELDS_FIELD_NUMBER: _ClassVar[int]
    key: Key
    value: bytes
    condition: Condition
    match_version: bytes
    ttl_ms: int
    merge_fields: bool
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ..., value: _Optional[bytes] = ..., condition: _Optional[_Union[Condition, str]] = ..., match_version: _Optional[bytes] = ..., ttl_ms: _Optional[int] = ..., merge_fields: _Optional[bool] = ..., **kwargs) -> None: ...

class DeleteOp(_message.Message):
    __slots__ = ("key", "condition", "match_version")
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONDITION_FIELD_NUMBER: _ClassVar[int]
    MATCH_VERSION_FIELD_NUMBER: _ClassVar[int]
    RETURN_FIELD_NUMBER: _ClassVar[int]
    key: Key
    condition: Condition
    match_version: bytes
    def __init__(self, key: _Optional[_Union[Key, _Mapping]] = ..., condition: _Optional[_Union[Condition, str]] = ..., match_version: _Optional[bytes] = ..., **kwargs) -> None: ...

class Operation(_message.Message):
    __slots__ = ("put", "delete", "abort_if_unsuccessful")
    PUT_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    ABORT_IF_UNSUCCESSFUL_FIELD_NUMBER: _ClassVar[int]
    put: PutOp
    delete: DeleteOp
    abort_if_unsuccessful: bool
    def __init__(self, put: _Optional[_Union[PutOp, _Mapping]] = ..., delete: _Optional[_Union[DeleteOp, _Mapping]] = ..., abort_if_unsuccessful: _Optional[bool] = ...) -> None: ...

class OperationResult(_message.Message):
    __slots__ = ("success", "new_version", "previous_exists", "previous_value", "previous_version", "previous_expiration_ms")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    NEW_VERSION_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EXISTS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_VALUE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_VERSION_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_EXPIRATION_MS_FIELD_NUMBER: _ClassVar[int]
    success: bool
    new_version: bytes
    previous_exists: bool
    previous_value: bytes
    previous_version: bytes
    previous_expiration_ms: int
    def __init__(self, success: _Optional[bool] = ..., new_version: _Optional[bytes] = ..., previous_exists: _Optional[bool] = ..., previous_value: _Optional[bytes] = ..., previous_version: _Optional[bytes] = ..., previous_expiration_ms: _Optional[int] = ...) -> None: ...

class RequestHeader(_message.Message):
    __slots__ = ("store", "timeout_ms", "topology_seq")
    STORE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_SEQ_FIELD_NUMBER: _ClassVar[int]
    store: str
    timeout_ms: int
    topology_seq: int
    def __init__(self, store: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., topology_seq: _Optional[int] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("header", "key", "consistency")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    key: Key
    consistency: Consistency
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., key: _Optional[_Union[Key, _Mapping]] = ..., consistency: _Optional[_Union[Consistency, _Mapping]] = ...) -> None: ...

class GetResponse(_message.Message):
    __slots__ = ("found", "record")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    found: bool
    record: Record
    def __init__(self, found: _Optional[bool] = ..., record: _Optional[_Union[Record, _Mapping]] = ...) -> None: ...

class PutRequest(_message.Message):
    __slots__ = ("header", "op", "durability")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    op: PutOp
    durability: Durability
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., op: _Optional[_Union[PutOp, _Mapping]] = ..., durability: _Optional[_Union[Durability, _Mapping]] = ...) -> None: ...

class WriteResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: OperationResult
    def __init__(self, result: _Optional[_Union[OperationResult, _Mapping]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("header", "op", "durability")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    op: DeleteOp
    durability: Durability
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., op: _Optional[_Union[DeleteOp, _Mapping]] = ..., durability: _Optional[_Union[Durability, _Mapping]] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("header", "ops", "durability")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    OPS_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    ops: _containers.RepeatedCompositeFieldContainer[Operation]
    durability: Durability
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., ops: _Optional[_Iterable[_Union[Operation, _Mapping]]] = ..., durability: _Optional[_Union[Durability, _Mapping]] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ("committed", "results", "failed_index", "failed_result")
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    FAILED_INDEX_FIELD_NUMBER: _ClassVar[int]
    FAILED_RESULT_FIELD_NUMBER: _ClassVar[int]
    committed: bool
    results: _containers.RepeatedCompositeFieldContainer[OperationResult]
    failed_index: int
    failed_result: OperationResult
    def __init__(self, committed: _Optional[bool] = ..., results: _Optional[_Iterable[_Union[OperationResult, _Mapping]]] = ..., failed_index: _Optional[int] = ..., failed_result: _Optional[_Union[OperationResult, _Mapping]] = ...) -> None: ...

class PutManyRequest(_message.Message):
    __slots__ = ("header", "ops", "durability")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    OPS_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    ops: _containers.RepeatedCompositeFieldContainer[PutOp]
    durability: Durability
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., ops: _Optional[_Iterable[_Union[PutOp, _Mapping]]] = ..., durability: _Optional[_Union[Durability, _Mapping]] = ...) -> None: ...

class PutManyResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[PutManyResult]
    def __init__(self, results: _Optional[_Iterable[_Union[PutManyResult, _Mapping]]] = ...) -> None: ...

class PutManyResult(_message.Message):
    __slots__ = ("result", "error_code", "error_message", "detail")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    result: OperationResult
    error_code: int
    error_message: str
    detail: ErrorDetail
    def __init__(self, result: _Optional[_Union[OperationResult, _Mapping]] = ..., error_code: _Optional[int] = ..., error_message: _Optional[str] = ..., detail: _Optional[_Union[ErrorDetail, _Mapping]] = ...) -> None: ...

class MultiDeleteRequest(_message.Message):
    __slots__ = ("header", "parent", "range", "depth", "durability")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    parent: Key
    range: KeyRange
    depth: Depth
    durability: Durability
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., parent: _Optional[_Union[Key, _Mapping]] = ..., range: _Optional[_Union[KeyRange, _Mapping]] = ..., depth: _Optional[_Union[Depth, str]] = ..., durability: _Optional[_Union[Durability, _Mapping]] = ...) -> None: ...

class MultiDeleteResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: int
    def __init__(self, deleted: _Optional[int] = ...) -> None: ...

class MultiGetRequest(_message.Message):
    __slots__ = ("header", "parent", "range", "depth", "direction", "keys_only", "batch_size", "resume", "consistency")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    KEYS_ONLY_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    parent: Key
    range: KeyRange
    depth: Depth
    direction: Direction
    keys_only: bool
    batch_size: int
    resume: bytes
    consistency: Consistency
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., parent: _Optional[_Union[Key, _Mapping]] = ..., range: _Optional[_Union[KeyRange, _Mapping]] = ..., depth: _Optional[_Union[Depth, str]] = ..., direction: _Optional[_Union[Direction, str]] = ..., keys_only: _Optional[bool] = ..., batch_size: _Optional[int] = ..., resume: _Optional[bytes] = ..., consistency: _Optional[_Union[Consistency, _Mapping]] = ...) -> None: ...

class MultiGetResponse(_message.Message):
    __slots__ = ("records", "resume")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[Record]
    resume: bytes
    def __init__(self, records: _Optional[_Iterable[_Union[Record, _Mapping]]] = ..., resume: _Optional[bytes] = ...) -> None: ...

class StoreScanRequest(_message.Message):
    __slots__ = ("header", "parent", "range", "depth", "keys_only", "batch_size", "resume", "consistency", "shard")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    KEYS_ONLY_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    SHARD_FIELD_NUMBER: _ClassVar[int]
    header: RequestHeader
    parent: Key
    range: KeyRange
    depth: Depth
    keys_only: bool
    batch_size: int
    resume: bytes
    consistency: Consistency
    shard: int
    def __init__(self, header: _Optional[_Union[RequestHeader, _Mapping]] = ..., parent: _Optional[_Union[Key, _Mapping]] = ..., range: _Optional[_Union[KeyRange, _Mapping]] = ..., depth: _Optional[_Union[Depth, str]] = ..., keys_only: _Optional[bool] = ..., batch_size: _Optional[int] = ..., resume: _Optional[bytes] = ..., consistency: _Optional[_Union[Consistency, _Mapping]] = ..., shard: _Optional[int] = ...) -> None: ...

class StoreScanResponse(_message.Message):
    __slots__ = ("records", "resume")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[Record]
    resume: bytes
    def __init__(self, records: _Optional[_Iterable[_Union[Record, _Mapping]]] = ..., resume: _Optional[bytes] = ...) -> None: ...

class StoreInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StoreInfoResponse(_message.Message):
    __slots__ = ("store", "partitions", "version", "topology_seq", "limits", "topology", "local_shards", "node")
    STORE_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_SEQ_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    LOCAL_SHARDS_FIELD_NUMBER: _ClassVar[int]
    NODE_FIELD_NUMBER: _ClassVar[int]
    store: str
    partitions: int
    version: str
    topology_seq: int
    limits: Limits
    topology: Topology
    local_shards: _containers.RepeatedCompositeFieldContainer[ShardStatus]
    node: int
    def __init__(self, store: _Optional[str] = ..., partitions: _Optional[int] = ..., version: _Optional[str] = ..., topology_seq: _Optional[int] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., topology: _Optional[_Union[Topology, _Mapping]] = ..., local_shards: _Optional[_Iterable[_Union[ShardStatus, _Mapping]]] = ..., node: _Optional[int] = ...) -> None: ...

class Topology(_message.Message):
    __slots__ = ("store", "partitions", "seq", "nodes", "shards", "partition_shard")
    STORE_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    PARTITION_SHARD_FIELD_NUMBER: _ClassVar[int]
    store: str
    partitions: int
    seq: int
    nodes: _containers.RepeatedCompositeFieldContainer[TopologyNode]
    shards: _containers.RepeatedCompositeFieldContainer[TopologyShard]
    partition_shard: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, store: _Optional[str] = ..., partitions: _Optional[int] = ..., seq: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[TopologyNode, _Mapping]]] = ..., shards: _Optional[_Iterable[_Union[TopologyShard, _Mapping]]] = ..., partition_shard: _Optional[_Iterable[int]] = ...) -> None: ...

class TopologyNode(_message.Message):
    __slots__ = ("id", "addr")
    ID_FIELD_NUMBER: _ClassVar[int]
    ADDR_FIELD_NUMBER: _ClassVar[int]
    id: int
    addr: str
    def __init__(self, id: _Optional[int] = ..., addr: _Optional[str] = ...) -> None: ...

class TopologyShard(_message.Message):
    __slots__ = ("id", "replicas", "preferred", "origin")
    ID_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    id: int
    replicas: _containers.RepeatedScalarFieldContainer[int]
    preferred: int
    origin: int
    def __init__(self, id: _Optional[int] = ..., replicas: _Optional[_Iterable[int]] = ..., preferred: _Optional[int] = ..., origin: _Optional[int] = ...) -> None: ...

class ShardStatus(_message.Message):
    __slots__ = ("shard", "leader", "term", "applied", "is_leader")
    SHARD_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    IS_LEADER_FIELD_NUMBER: _ClassVar[int]
    shard: int
    leader: int
    term: int
    applied: int
    is_leader: bool
    def __init__(self, shard: _Optional[int] = ..., leader: _Optional[int] = ..., term: _Optional[int] = ..., applied: _Optional[int] = ..., is_leader: _Optional[bool] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("max_key_bytes", "max_value_bytes", "max_components", "max_timeout_ms", "max_result_bytes", "max_put_many_records")
    MAX_KEY_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_VALUE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    MAX_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_PUT_MANY_RECORDS_FIELD_NUMBER: _ClassVar[int]
    max_key_bytes: int
    max_value_bytes: int
    max_components: int
    max_timeout_ms: int
    max_result_bytes: int
    max_put_many_records: int
    def __init__(self, max_key_bytes: _Optional[int] = ..., max_value_bytes: _Optional[int] = ..., max_components: _Optional[int] = ..., max_timeout_ms: _Optional[int] = ..., max_result_bytes: _Optional[int] = ..., max_put_many_records: _Optional[int] = ...) -> None: ...

class ErrorDetail(_message.Message):
    __slots__ = ("kind", "action", "limit", "max", "seen", "maybe_applied", "leader_node", "leader_addr", "moved_to_shard", "partitions", "topology_seq")
    class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ACTION_UNSPECIFIED: _ClassVar[ErrorDetail.Action]
        ACTION_RETRY: _ClassVar[ErrorDetail.Action]
        ACTION_REFRESH: _ClassVar[ErrorDetail.Action]
        ACTION_FIX_INPUT: _ClassVar[ErrorDetail.Action]
        ACTION_NONE: _ClassVar[ErrorDetail.Action]
    ACTION_UNSPECIFIED: ErrorDetail.Action
    ACTION_RETRY: ErrorDetail.Action
    ACTION_REFRESH: ErrorDetail.Action
    ACTION_FIX_INPUT: ErrorDetail.Action
    ACTION_NONE: ErrorDetail.Action
    KIND_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    SEEN_FIELD_NUMBER: _ClassVar[int]
    MAYBE_APPLIED_FIELD_NUMBER: _ClassVar[int]
    LEADER_NODE_FIELD_NUMBER: _ClassVar[int]
    LEADER_ADDR_FIELD_NUMBER: _ClassVar[int]
    MOVED_TO_SHARD_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_SEQ_FIELD_NUMBER: _ClassVar[int]
    kind: str
    action: ErrorDetail.Action
    limit: str
    max: int
    seen: int
    maybe_applied: bool
    leader_node: int
    leader_addr: str
    moved_to_shard: int
    partitions: int
    topology_seq: int
    def __init__(self, kind: _Optional[str] = ..., action: _Optional[_Union[ErrorDetail.Action, str]] = ..., limit: _Optional[str] = ..., max: _Optional[int] = ..., seen: _Optional[int] = ..., maybe_applied: _Optional[bool] = ..., leader_node: _Optional[int] = ..., leader_addr: _Optional[str] = ..., moved_to_shard: _Optional[int] = ..., partitions: _Optional[int] = ..., topology_seq: _Optional[int] = ...) -> None: ...

class CallsRequest(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[StreamCall]
    def __init__(self, calls: _Optional[_Iterable[_Union[StreamCall, _Mapping]]] = ...) -> None: ...

class StreamCall(_message.Message):
    __slots__ = ("id", "get", "multi_get", "put", "delete", "execute", "put_many", "multi_delete", "store_info", "token")
    ID_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    MULTI_GET_FIELD_NUMBER: _ClassVar[int]
    PUT_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    PUT_MANY_FIELD_NUMBER: _ClassVar[int]
    MULTI_DELETE_FIELD_NUMBER: _ClassVar[int]
    STORE_INFO_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    id: int
    get: GetRequest
    multi_get: MultiGetRequest
    put: PutRequest
    delete: DeleteRequest
    execute: ExecuteRequest
    put_many: PutManyRequest
    multi_delete: MultiDeleteRequest
    store_info: StoreInfoRequest
    token: str
    def __init__(self, id: _Optional[int] = ..., get: _Optional[_Union[GetRequest, _Mapping]] = ..., multi_get: _Optional[_Union[MultiGetRequest, _Mapping]] = ..., put: _Optional[_Union[PutRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteRequest, _Mapping]] = ..., execute: _Optional[_Union[ExecuteRequest, _Mapping]] = ..., put_many: _Optional[_Union[PutManyRequest, _Mapping]] = ..., multi_delete: _Optional[_Union[MultiDeleteRequest, _Mapping]] = ..., store_info: _Optional[_Union[StoreInfoRequest, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class CallsResponse(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[StreamAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[StreamAnswer, _Mapping]]] = ...) -> None: ...

class StreamAnswer(_message.Message):
    __slots__ = ("id", "code", "message", "details", "get", "multi_get", "put", "delete", "execute", "put_many", "multi_delete", "store_info")
    ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    MULTI_GET_FIELD_NUMBER: _ClassVar[int]
    PUT_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    EXECUTE_FIELD_NUMBER: _ClassVar[int]
    PUT_MANY_FIELD_NUMBER: _ClassVar[int]
    MULTI_DELETE_FIELD_NUMBER: _ClassVar[int]
    STORE_INFO_FIELD_NUMBER: _ClassVar[int]
    id: int
    code: int
    message: str
    details: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
    get: GetResponse
    multi_get: MultiGetResponse
    put: WriteResponse
    delete: WriteResponse
    execute: ExecuteResponse
    put_many: PutManyResponse
    multi_delete: MultiDeleteResponse
    store_info: StoreInfoResponse
    def __init__(self, id: _Optional[int] = ..., code: _Optional[int] = ..., message: _Optional[str] = ..., details: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ..., get: _Optional[_Union[GetResponse, _Mapping]] = ..., multi_get: _Optional[_Union[MultiGetResponse, _Mapping]] = ..., put: _Optional[_Union[WriteResponse, _Mapping]] = ..., delete: _Optional[_Union[WriteResponse, _Mapping]] = ..., execute: _Optional[_Union[ExecuteResponse, _Mapping]] = ..., put_many: _Optional[_Union[PutManyResponse, _Mapping]] = ..., multi_delete: _Optional[_Union[MultiDeleteResponse, _Mapping]] = ..., store_info: _Optional[_Union[StoreInfoResponse, _Mapping]] = ...) -> None: ...

class LoginRequest(_message.Message):
    __slots__ = ("user", "password")
    USER_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    user: str
    password: str
    def __init__(self, user: _Optional[str] = ..., password: _Optional[str] = ...) -> None: ...

class LoginResponse(_message.Message):
    __slots__ = ("token", "expires_at_ms", "role")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    token: str
    expires_at_ms: int
    role: str
    def __init__(self, token: _Optional[str] = ..., expires_at_ms: _Optional[int] = ..., role: _Optional[str] = ...) -> None: ...

class RenewRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class RenewResponse(_message.Message):
    __slots__ = ("token", "expires_at_ms", "role")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_MS_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    token: str
    expires_at_ms: int
    role: str
    def __init__(self, token: _Optional[str] = ..., expires_at_ms: _Optional[int] = ..., role: _Optional[str] = ...) -> None: ...
