"""Generated reward.v1 messages (reward_pb2) and gRPC stubs (reward_pb2_grpc).

`make generate-python` regenerates them from proto/reward/v1/reward.proto;
`make checkgenerate-python` proves the committed files are what it makes.
"""
