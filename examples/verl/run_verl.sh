#!/bin/sh
# Train with verl against a local rewardd (rewardd serve --config
# examples/verl/rewardd.yaml, from another shell). Needs verl and a GPU;
# the data paths are yours. Checkpoints and logs go outside the clone.
set -eu
export REWARDD_ADDR=127.0.0.1:50051
python3 -m verl.trainer.main_ppo \
  data.train_files="$HOME/data/gsm8k/train.parquet" \
  data.val_files="$HOME/data/gsm8k/test.parquet" \
  reward.custom_reward_function.path=pkg://rewardd_client.verl \
  reward.custom_reward_function.name=compute_score \
  +reward.custom_reward_function.reward_kwargs.functions='{openai/gsm8k: [accuracy, format], "*": accuracy}' \
  reward_model.sandbox_fusion.url=http://127.0.0.1:8080/run_code \
  reward_model.sandbox_fusion.max_concurrent=64 \
  +ray_kwargs.ray_init.runtime_env.env_vars.REWARDD_ADDR="$REWARDD_ADDR" \
  trainer.default_local_dir=/var/tmp/rewardd-run/verl   # outside the clone
