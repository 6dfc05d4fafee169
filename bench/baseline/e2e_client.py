"""End to end from Python: one big batch scored by rewardd over gRPC, against
the same batch scored in process by the TRL-style functions of trl_rewards.py.

The client is deliberately tiny and generic, the code a trainer-side reward
function needs: turn the column lists TRL passes (prompts, completions, and
every other dataset column as a keyword argument) into a ScoreRequest in
reward.v1's prompt-once form (each distinct prompt once, each column once
with a value per prompt where a prompt's rollouts agree on it, else a value
per rollout), call Score once for all functions, turn the column-major
answer back into one list per function (None where the status is not OK).
--rows-form sends every rollout with its prompt and fields instead. It uses stubs that `rewardd-bench`
generates into a temporary directory with grpc_tools.protoc from the
reward.v1 descriptor; it does not use clients/python.

The two ways are timed alternately, --repeats times each after one warm-up
each, so that both see the same machine. Prints JSON.
"""

import argparse
import json
import statistics
import sys
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trl_rewards  # noqa: E402

RESERVED = ("id", "group", "prompt", "completion")


class Client:
    """A minimal rewardd client."""

    def __init__(self, addr, stubs, token="", ca_file="", rows_form=False):
        sys.path.insert(0, stubs)
        import grpc
        from google.protobuf import struct_pb2
        from reward.v1 import reward_pb2, reward_pb2_grpc

        self.pb = reward_pb2
        self.value = struct_pb2.Value
        self.rows_form = rows_form
        opts = [("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20)]
        if ca_file:
            with open(ca_file, "rb") as f:
                channel = grpc.secure_channel(addr, grpc.ssl_channel_credentials(f.read()), options=opts)
        else:
            channel = grpc.insecure_channel(addr, options=opts)
        self.metadata = [("authorization", "Bearer " + token)] if token else None
        self.stub = reward_pb2_grpc.RewardServiceStub(channel)

    def score(self, functions, prompts, completions, **kwargs):
        """Scores one batch given as TRL gives it to a reward function (the
        dataset columns in kwargs) with the named served functions (all when
        empty), in one round trip: {name: [float | None]}."""
        t0 = time.perf_counter()
        fields = {k: v for k, v in kwargs.items() if k not in RESERVED}
        if self.rows_form:
            req = self.pb.ScoreRequest(functions=functions)
            for i, (prompt, completion) in enumerate(zip(prompts, completions)):
                r = req.rollouts.add(prompt=prompt, completion=completion)
                r.fields.update({k: v[i] for k, v in fields.items()})
        else:
            req = self.prompt_once(functions, prompts, completions, fields)
        t1 = time.perf_counter()
        resp = self.stub.Score(req, metadata=self.metadata)
        t2 = time.perf_counter()
        ok = self.pb.SCORE_STATUS_OK
        out = {
            fs.name: [v if s == ok else None for v, s in zip(fs.values, fs.status)]
            for fs in resp.functions
        }
        # Where the time went: building the request, the call (encoding,
        # transport, the server, decoding the answer), the result lists.
        self.last = {"build": t1 - t0, "call": t2 - t1, "unpack": time.perf_counter() - t2}
        return out


    def prompt_once(self, functions, prompts, completions, fields):
        """The ScoreRequest in the prompt-once form."""
        index = {}
        idx = [index.setdefault(p, len(index)) for p in prompts]
        Rollout = self.pb.Rollout
        rollouts = [Rollout(completion=c, prompt_index=i) for c, i in zip(completions, idx)]
        req = self.pb.ScoreRequest(functions=functions, prompts=list(index), rollouts=rollouts)
        for name, values in fields.items():
            per = [None] * len(index)
            seen = [False] * len(index)
            for v, i in zip(values, idx):
                if not seen[i]:
                    per[i], seen[i] = v, True
                elif type(per[i]) is not type(v) or per[i] != v:
                    per = None
                    break
            column = req.prompt_fields.add(name=name) if per is not None else req.rollout_fields.add(name=name)
            for v in per if per is not None else values:
                column.values.add().CopyFrom(self.json_value(v))
        return req

    def json_value(self, v):
        value = self.value()
        if v is None:
            value.null_value = 0
        elif isinstance(v, bool):
            value.bool_value = v
        elif isinstance(v, (int, float)):
            value.number_value = v
        elif isinstance(v, str):
            value.string_value = v
        elif isinstance(v, dict):
            value.struct_value.update(v)
        else:
            value.list_value.extend(v)
        return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--addr", required=True)
    ap.add_argument("--stubs", required=True, help="directory holding reward/v1/reward_pb2*.py")
    ap.add_argument("--rows", required=True, help="JSONL rows: the batch")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--token", default="")
    ap.add_argument("--ca-file", default="")
    ap.add_argument("--functions", default="", help="comma-separated function names (default: all)")
    ap.add_argument("--rows-form", action="store_true", help="send every rollout with its prompt and fields")
    args = ap.parse_args()
    functions = trl_rewards.select(args.functions)

    # Both ways start from the same column lists, as TRL hands them over.
    kwargs = trl_rewards.columns(trl_rewards.read_rows(args.rows))
    client = Client(args.addr, args.stubs, args.token, args.ca_file, args.rows_form)

    def in_process():
        return trl_rewards.score_batch(kwargs, functions)

    def remote():
        return client.score(list(functions), **kwargs)

    local_scores, remote_scores = in_process(), remote()  # warm-up
    times = {"in_process": [], "client": []}
    parts = {"build": [], "call": [], "unpack": []}
    for _ in range(args.repeats):
        for name, fn in (("in_process", in_process), ("client", remote)):
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
        for k, v in client.last.items():
            parts[k].append(v)

    agree = total = 0
    for name, values in local_scores.items():
        theirs = remote_scores.get(name)
        if theirs is None:
            continue
        for a, b in zip(values, theirs):
            total += 1
            agree += a == b
    json.dump(
        {
            "rows": len(kwargs["completions"]),
            "in_process_seconds": times["in_process"],
            "client_seconds": times["client"],
            "in_process_median": statistics.median(times["in_process"]),
            "client_median": statistics.median(times["client"]),
            "client_parts_median": {k: statistics.median(v) for k, v in parts.items()},
            "agree": agree,
            "compared": total,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
