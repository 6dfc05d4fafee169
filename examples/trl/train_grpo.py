"""GRPO with TRL, scoring rewards on a rewardd server.

    rewardd serve --config examples/axolotl/rewardd.yaml &
    REWARDD_ADDR=127.0.0.1:50051 python examples/trl/train_grpo.py

The reward functions are rewardd's: TRL calls them one after the other with
the same batch, and the first call scores all three in one round trip.
"""

from rewardd_client import remote

# Checkpoints and logs go outside the clone, whatever directory this runs from.
OUTPUT_DIR = "/var/tmp/rewardd-run/grpo-rewardd"


def reward_funcs():
    """The reward functions handed to GRPOTrainer, in order."""
    return [remote.accuracy, remote.format, remote.repetition]


def main():
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    dataset = load_dataset("openai/gsm8k", "main", split="train")
    dataset = dataset.map(lambda row: {"prompt": row["question"]})  # keeps the `answer` column
    trainer = GRPOTrainer(
        model="Qwen/Qwen2.5-0.5B-Instruct",
        reward_funcs=reward_funcs(),
        args=GRPOConfig(output_dir=OUTPUT_DIR, num_generations=8, reward_weights=[1.0, 0.2, 0.2]),
        train_dataset=dataset,
    )
    trainer.train()


if __name__ == "__main__":
    main()
