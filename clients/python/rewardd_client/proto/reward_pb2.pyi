from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

AGGREGATION_MODE_HATCHERY: AggregationMode
AGGREGATION_MODE_NORMALIZE_THEN_SUM: AggregationMode
AGGREGATION_MODE_SUM_THEN_NORMALIZE: AggregationMode
AGGREGATION_MODE_UNSPECIFIED: AggregationMode
AGGREGATION_SCALE_BATCH: AggregationScale
AGGREGATION_SCALE_GROUP: AggregationScale
AGGREGATION_SCALE_NONE: AggregationScale
AGGREGATION_SCALE_UNSPECIFIED: AggregationScale
DESCRIPTOR: _descriptor.FileDescriptor
SCORE_STATUS_ERROR: ScoreStatus
SCORE_STATUS_NOT_APPLICABLE: ScoreStatus
SCORE_STATUS_OK: ScoreStatus
SCORE_STATUS_UNSPECIFIED: ScoreStatus
VERDICT_ACCEPTED: Verdict
VERDICT_COMPILATION_ERROR: Verdict
VERDICT_MEMORY_LIMIT_EXCEEDED: Verdict
VERDICT_OUTPUT_LIMIT_EXCEEDED: Verdict
VERDICT_RUNTIME_ERROR: Verdict
VERDICT_TIME_LIMIT_EXCEEDED: Verdict
VERDICT_UNSPECIFIED: Verdict
VERDICT_WRONG_ANSWER: Verdict

class Aggregation(_message.Message):
    __slots__ = ["mode", "scale", "weights"]
    class WeightsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    MODE_FIELD_NUMBER: _ClassVar[int]
    SCALE_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    mode: AggregationMode
    scale: AggregationScale
    weights: _containers.ScalarMap[str, float]
    def __init__(self, mode: _Optional[_Union[AggregationMode, str]] = ..., scale: _Optional[_Union[AggregationScale, str]] = ..., weights: _Optional[_Mapping[str, float]] = ...) -> None: ...

class Execution(_message.Message):
    __slots__ = ["compiler_output", "language", "passed", "tests", "total", "verdict"]
    COMPILER_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    TESTS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    compiler_output: str
    language: str
    passed: int
    tests: _containers.RepeatedCompositeFieldContainer[TestExecution]
    total: int
    verdict: Verdict
    def __init__(self, language: _Optional[str] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., passed: _Optional[int] = ..., total: _Optional[int] = ..., tests: _Optional[_Iterable[_Union[TestExecution, _Mapping]]] = ..., compiler_output: _Optional[str] = ...) -> None: ...

class FieldColumn(_message.Message):
    __slots__ = ["name", "values"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    values: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Value]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[_Union[_struct_pb2.Value, _Mapping]]] = ...) -> None: ...

class FunctionInfo(_message.Message):
    __slots__ = ["kind", "name", "params", "params_yaml", "weight"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    PARAMS_YAML_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    name: str
    params: _struct_pb2.Struct
    params_yaml: str
    weight: float
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., weight: _Optional[float] = ..., params_yaml: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class FunctionScores(_message.Message):
    __slots__ = ["errors", "executions", "name", "reason_rollouts", "reason_texts", "reasons", "status", "values"]
    class ErrorsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    class ExecutionsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: Execution
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[Execution, _Mapping]] = ...) -> None: ...
    class ReasonsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    EXECUTIONS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    REASON_ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    REASON_TEXTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    errors: _containers.ScalarMap[int, str]
    executions: _containers.MessageMap[int, Execution]
    name: str
    reason_rollouts: _containers.RepeatedScalarFieldContainer[int]
    reason_texts: _containers.RepeatedScalarFieldContainer[str]
    reasons: _containers.ScalarMap[int, str]
    status: _containers.RepeatedScalarFieldContainer[ScoreStatus]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[float]] = ..., status: _Optional[_Iterable[_Union[ScoreStatus, str]]] = ..., errors: _Optional[_Mapping[int, str]] = ..., executions: _Optional[_Mapping[int, Execution]] = ..., reasons: _Optional[_Mapping[int, str]] = ..., reason_rollouts: _Optional[_Iterable[int]] = ..., reason_texts: _Optional[_Iterable[str]] = ...) -> None: ...

class FunctionSpec(_message.Message):
    __slots__ = ["kind", "name", "params"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    name: str
    params: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListFunctionsRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class ListFunctionsResponse(_message.Message):
    __slots__ = ["aggregation", "config_fingerprint", "functions"]
    AGGREGATION_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    aggregation: Aggregation
    config_fingerprint: str
    functions: _containers.RepeatedCompositeFieldContainer[FunctionInfo]
    def __init__(self, functions: _Optional[_Iterable[_Union[FunctionInfo, _Mapping]]] = ..., config_fingerprint: _Optional[str] = ..., aggregation: _Optional[_Union[Aggregation, _Mapping]] = ...) -> None: ...

class Rollout(_message.Message):
    __slots__ = ["completion", "fields", "group", "id", "prompt", "prompt_index"]
    COMPLETION_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_INDEX_FIELD_NUMBER: _ClassVar[int]
    completion: str
    fields: _struct_pb2.Struct
    group: str
    id: str
    prompt: str
    prompt_index: int
    def __init__(self, id: _Optional[str] = ..., group: _Optional[str] = ..., prompt: _Optional[str] = ..., completion: _Optional[str] = ..., fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., prompt_index: _Optional[int] = ...) -> None: ...

class ScoreRequest(_message.Message):
    __slots__ = ["aggregation", "batch_id", "functions", "inline", "omit_ok_reasons", "prompt_fields", "prompts", "reasons_as_lists", "rollout_fields", "rollouts"]
    AGGREGATION_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    INLINE_FIELD_NUMBER: _ClassVar[int]
    OMIT_OK_REASONS_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELDS_FIELD_NUMBER: _ClassVar[int]
    REASONS_AS_LISTS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELDS_FIELD_NUMBER: _ClassVar[int]
    aggregation: Aggregation
    batch_id: str
    functions: _containers.RepeatedScalarFieldContainer[str]
    inline: _containers.RepeatedCompositeFieldContainer[FunctionSpec]
    omit_ok_reasons: bool
    prompt_fields: _containers.RepeatedCompositeFieldContainer[FieldColumn]
    prompts: _containers.RepeatedScalarFieldContainer[str]
    reasons_as_lists: bool
    rollout_fields: _containers.RepeatedCompositeFieldContainer[FieldColumn]
    rollouts: _containers.RepeatedCompositeFieldContainer[Rollout]
    def __init__(self, batch_id: _Optional[str] = ..., rollouts: _Optional[_Iterable[_Union[Rollout, _Mapping]]] = ..., functions: _Optional[_Iterable[str]] = ..., inline: _Optional[_Iterable[_Union[FunctionSpec, _Mapping]]] = ..., aggregation: _Optional[_Union[Aggregation, _Mapping]] = ..., prompts: _Optional[_Iterable[str]] = ..., prompt_fields: _Optional[_Iterable[_Union[FieldColumn, _Mapping]]] = ..., rollout_fields: _Optional[_Iterable[_Union[FieldColumn, _Mapping]]] = ..., omit_ok_reasons: bool = ..., reasons_as_lists: bool = ...) -> None: ...

class ScoreResponse(_message.Message):
    __slots__ = ["advantages", "batch_id", "config_fingerprint", "error_code", "error_message", "functions", "rewards", "unscorable", "warnings"]
    ADVANTAGES_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    UNSCORABLE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    advantages: _containers.RepeatedScalarFieldContainer[float]
    batch_id: str
    config_fingerprint: str
    error_code: int
    error_message: str
    functions: _containers.RepeatedCompositeFieldContainer[FunctionScores]
    rewards: _containers.RepeatedScalarFieldContainer[float]
    unscorable: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, batch_id: _Optional[str] = ..., functions: _Optional[_Iterable[_Union[FunctionScores, _Mapping]]] = ..., rewards: _Optional[_Iterable[float]] = ..., advantages: _Optional[_Iterable[float]] = ..., config_fingerprint: _Optional[str] = ..., unscorable: _Optional[int] = ..., error_code: _Optional[int] = ..., error_message: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class TestExecution(_message.Message):
    __slots__ = ["cpu_seconds", "detail", "exit_code", "index", "memory_bytes", "verdict", "wall_seconds"]
    CPU_SECONDS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    EXIT_CODE_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    WALL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    cpu_seconds: float
    detail: str
    exit_code: int
    index: int
    memory_bytes: int
    verdict: Verdict
    wall_seconds: float
    def __init__(self, index: _Optional[int] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., cpu_seconds: _Optional[float] = ..., wall_seconds: _Optional[float] = ..., memory_bytes: _Optional[int] = ..., exit_code: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class AggregationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class AggregationScale(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ScoreStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
