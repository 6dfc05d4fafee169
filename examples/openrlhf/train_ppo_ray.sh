#!/usr/bin/env bash
# OpenRLHF with rewardd as its remote reward: start rewardd on the reward
# host, then point --remote_rm_url at its /get_reward endpoint.
set -euo pipefail

rewardd serve --config examples/openrlhf/rewardd.yaml --http-addr 0.0.0.0:8080 \
  --auth-token-file /etc/rewardd/token &   # non-loopback: require a token

ray job submit --address="http://127.0.0.1:8265" -- python3 -m openrlhf.cli.train_ppo_ray \
  --pretrain Qwen/Qwen2.5-1.5B-Instruct \
  --remote_rm_url http://REWARD_HOST:8080/get_reward \
  --prompt_data openai/gsm8k --input_key question --label_key answer \
  --advantage_estimator group_norm --n_samples_per_prompt 8 \
  --apply_chat_template \
  --save_path /var/tmp/rewardd-run/openrlhf --ckpt_path /var/tmp/rewardd-run/openrlhf/checkpoints   # outside the clone
