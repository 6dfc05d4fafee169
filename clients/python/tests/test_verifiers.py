"""The kinds instruction_following, multiple_choice, json_schema and tool_call
through Client.score with inline functions, against a real `rewardd serve` on
its embedded default config (which serves none of them but lets a request
define them), the rows carrying nested fields as datasets do: IFEval's list
of kwargs dicts, a schema object, BFCL's expected calls."""

from __future__ import annotations

import json
import math
import os
import unittest

import _support

from rewardd_client import Client, Status
from rewardd_client.proto import reward_pb2

IFEVAL = os.path.join(_support.REPO, "scorers", "instructions", "testdata")


def ifeval_row(key: int) -> tuple[dict, list[bool]]:
    """IFEval's prompt row for key with its published PaLM 2 response, and the
    reference evaluator's strict verdict per instruction."""

    def find(name: str) -> dict:
        with open(os.path.join(IFEVAL, name), encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                if row["key"] == key:
                    return row
        raise AssertionError(f"IFEval key {key} is not in {name}")

    inp, resp, ref = find("ifeval_input_data.jsonl"), find("ifeval_responses_palm2_156.jsonl"), find("ifeval_reference_palm2_156.jsonl")
    row = {"prompt": inp["prompt"], "completion": resp["response"], "instruction_id_list": inp["instruction_id_list"], "kwargs": inp["kwargs"]}
    return row, ref["strict"]


SCHEMA = {"type": "object", "required": ["name", "age"], "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
# BFCL's ground truth: the city must be Paris; the unit celsius or left out.
WEATHER = [{"get_weather": {"city": ["Paris"], "unit": ["celsius", ""]}}]

INLINE = [
    {"name": "ifeval", "kind": "instruction_following"},
    {"name": "choice", "kind": "multiple_choice", "params": {"letters": "ABCDE"}},
    {"name": "schema", "kind": "json_schema", "params": {"schema_field": "schema"}},
    # A FunctionSpec is sent as it is.
    reward_pb2.FunctionSpec(name="tools", kind="tool_call"),
]
COLUMNS = ("instruction_id_list", "kwargs", "answer", "schema", "tool_calls")


class VerifiersTest(_support.ServedTest):
    def rows(self) -> list[tuple[dict, str, object, str]]:
        """(row, function, want, reason): want is a score, or a Status other
        than OK; reason is a text the reason must contain ("" for none)."""
        passed, passed_ref = ifeval_row(279)
        failed, failed_ref = ifeval_row(1508)
        self.assertTrue(all(passed_ref), "key 279: the reference follows every instruction")
        self.assertFalse(failed_ref[0], "key 1508: the reference finds keywords:existence not followed")
        return [
            (passed, "ifeval", 1.0, ""),
            (failed, "ifeval", 0.0, failed["instruction_id_list"][0]),
            ({"prompt": "p", "completion": "no instructions", "kwargs": [{}]}, "ifeval", Status.NOT_APPLICABLE, "instruction_id_list"),
            ({"prompt": "p", "completion": "x", "instruction_id_list": ["punctuation:no_semicolon"], "kwargs": [None]}, "ifeval", Status.ERROR, "punctuation:no_semicolon"),
            ({"prompt": "q", "completion": "Thinking...\nThe answer is (E).", "answer": 4}, "choice", 1.0, ""),
            ({"prompt": "q", "completion": "Answer: B", "answer": "E"}, "choice", 0.0, "answered B"),
            ({"prompt": "q", "completion": "Answer: B"}, "choice", Status.NOT_APPLICABLE, '"answer"'),
            ({"prompt": "s", "completion": '```json\n{"name": "Ada", "age": 36}\n```', "schema": SCHEMA}, "schema", 1.0, ""),
            ({"prompt": "s", "completion": '{"name": "Ada", "age": "36"}', "schema": SCHEMA}, "schema", 0.0, "at /age"),
            ({"prompt": "s", "completion": '{"name": "Ada"}'}, "schema", Status.NOT_APPLICABLE, '"schema"'),
            ({"prompt": "t", "completion": '{"tool_calls": [{"function": {"name": "get_weather", "arguments": "{\\"city\\": \\"paris\\"}"}}]}', "tool_calls": WEATHER}, "tools", 1.0, ""),
            ({"prompt": "t", "completion": '<tool_call>{"name": "get_weather", "arguments": {"city": "London"}}</tool_call>', "tool_calls": WEATHER}, "tools", 0.0, "city"),
            ({"prompt": "t", "completion": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'}, "tools", Status.NOT_APPLICABLE, '"tool_calls"'),
        ]

    def check(self, wire: str) -> None:
        cases = self.rows()
        prompts = [row["prompt"] for row, *_ in cases]
        completions = [row["completion"] for row, *_ in cases]
        # TRL's columns: one value per completion, None where the row has none.
        columns = {c: [row.get(c) for row, *_ in cases] for c in COLUMNS}
        with Client(addr=self.server.grpc_addr, wire=wire) as c:
            res = c.score(prompts, completions, columns, inline=INLINE)
        self.assertEqual(sorted(res.functions), ["choice", "ifeval", "schema", "tools"])
        for i, (row, fn, want, reason) in enumerate(cases):
            for name, got in res.functions.items():
                value, status, why = got.values[i], got.status[i], got.errors.get(i, "")
                where = f"{wire}: row {i} ({row['completion'][:30]!r}), {name}: {status.name} {value} {why!r}"
                if name != fn:
                    # Every row carries the fields of one kind only.
                    self.assertEqual(status, Status.NOT_APPLICABLE, where)
                elif isinstance(want, Status):
                    self.assertEqual(status, want, where)
                    self.assertTrue(math.isnan(value), where)
                    self.assertIn(reason, why, where)
                else:
                    self.assertEqual((status, value), (Status.OK, want), where)
                    self.assertIn(reason, why, where)

    def test_prompt_once(self):
        self.check("columns")

    def test_rows(self):
        self.check("rows")

    def test_bad_inline_function(self):
        with Client(addr=self.server.grpc_addr) as c:
            with self.assertRaises(ValueError):
                c.score(["p"], ["c"], inline=[{"name": "x", "kind": "regex", "parmas": {}}])
            with self.assertRaises(ValueError):
                c.score(["p"], ["c"], inline=[{"name": "x"}])


if __name__ == "__main__":
    unittest.main()
