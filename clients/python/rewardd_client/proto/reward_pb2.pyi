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

class FieldColumn(_message.Message):
    __slots__ = ["name", "values"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    name: str
    values: _containers.RepeatedCompositeFieldContainer[_struct_pb2.Value]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[_Union[_struct_pb2.Value, _Mapping]]] = ...) -> None: ...

class FunctionInfo(_message.Message):
    __slots__ = ["kind", "name", "params_yaml", "weight"]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_YAML_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    name: str
    params_yaml: str
    weight: float
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[str] = ..., weight: _Optional[float] = ..., params_yaml: _Optional[str] = ...) -> None: ...

class FunctionScores(_message.Message):
    __slots__ = ["errors", "name", "status", "values"]
    class ErrorsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    errors: _containers.ScalarMap[int, str]
    name: str
    status: _containers.RepeatedScalarFieldContainer[ScoreStatus]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, name: _Optional[str] = ..., values: _Optional[_Iterable[float]] = ..., status: _Optional[_Iterable[_Union[ScoreStatus, str]]] = ..., errors: _Optional[_Mapping[int, str]] = ...) -> None: ...

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
    __slots__ = ["aggregation", "batch_id", "functions", "inline", "prompt_fields", "prompts", "rollout_fields", "rollouts"]
    AGGREGATION_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FUNCTIONS_FIELD_NUMBER: _ClassVar[int]
    INLINE_FIELD_NUMBER: _ClassVar[int]
    PROMPTS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELDS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUTS_FIELD_NUMBER: _ClassVar[int]
    ROLLOUT_FIELDS_FIELD_NUMBER: _ClassVar[int]
    aggregation: Aggregation
    batch_id: str
    functions: _containers.RepeatedScalarFieldContainer[str]
    inline: _containers.RepeatedCompositeFieldContainer[FunctionSpec]
    prompt_fields: _containers.RepeatedCompositeFieldContainer[FieldColumn]
    prompts: _containers.RepeatedScalarFieldContainer[str]
    rollout_fields: _containers.RepeatedCompositeFieldContainer[FieldColumn]
    rollouts: _containers.RepeatedCompositeFieldContainer[Rollout]
    def __init__(self, batch_id: _Optional[str] = ..., rollouts: _Optional[_Iterable[_Union[Rollout, _Mapping]]] = ..., functions: _Optional[_Iterable[str]] = ..., inline: _Optional[_Iterable[_Union[FunctionSpec, _Mapping]]] = ..., aggregation: _Optional[_Union[Aggregation, _Mapping]] = ..., prompts: _Optional[_Iterable[str]] = ..., prompt_fields: _Optional[_Iterable[_Union[FieldColumn, _Mapping]]] = ..., rollout_fields: _Optional[_Iterable[_Union[FieldColumn, _Mapping]]] = ...) -> None: ...

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

class AggregationMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class AggregationScale(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ScoreStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
