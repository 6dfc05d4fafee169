"""Writes the benchmark's rows: IFEval's 541 prompts, each with a response.
The 156 prompts with a published PaLM 2 response get it; the others get the
responses of the others in turn (response i mod 156), so that every row has
a real model's text of a real length. Two files, one for each side:

  rows.jsonl       rewardd's: id, prompt, completion, instruction_id_list, kwargs
  responses.jsonl  the reference's input_response_data: prompt, response

    /usr/bin/python3 rows.py INPUT_DATA RESPONSES OUTDIR
"""
import json
import os
import sys

inputs = [json.loads(l) for l in open(sys.argv[1])]
palm = {}
for l in open(sys.argv[2]):
    r = json.loads(l)
    palm[r["prompt"]] = r["response"]
pool = sorted(palm.values())
out = sys.argv[3]
with open(os.path.join(out, "rows.jsonl"), "w") as rows, open(os.path.join(out, "responses.jsonl"), "w") as resp:
    for i, row in enumerate(inputs):
        text = palm.get(row["prompt"], pool[i % len(pool)])
        rows.write(json.dumps({"id": str(row["key"]), "prompt": row["prompt"], "completion": text,
                               "instruction_id_list": row["instruction_id_list"], "kwargs": row["kwargs"]}) + "\n")
        resp.write(json.dumps({"prompt": row["prompt"], "response": text}) + "\n")
