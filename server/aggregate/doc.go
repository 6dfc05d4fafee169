// Package aggregate turns per-function scores into the numbers a GRPO-style
// trainer trains on: one combined reward and one advantage per rollout,
// computed as TRL's GRPOTrainer (and Axolotl's Hatchery trainer) compute them,
// NaN handling included.
//
// The package is pure arithmetic: no I/O, no goroutines, no globals. Compute
// allocates O(rollouts + groups × functions) and runs in time linear in the
// number of scores.
//
// # Inputs
//
// scores[k][i] is the value of function k on rollout i (column-major, as
// reward.v1.FunctionScores). NaN means the function gave no score: TRL's None,
// which rewardd emits for NOT_APPLICABLE and for ERROR. groups[i] names the
// group of rollout i: the G completions of one prompt that GRPO compares.
// Weights has one entry per function; nil means every weight is 1 (TRL's
// reward_weights=None).
//
// # The modes and the code each one follows
//
// The TRL code is trl/trainer/grpo_trainer.py, GRPOTrainer
// ._generate_and_score_completions, and trl/trainer/utils.py nanstd, in the
// TRL versions that have multi_objective_aggregation (the GDPO option) and
// scale_rewards ∈ {"group","batch","none"}. Axolotl's is
// src/axolotl/integrations/hatchery/rl_trainer.py, HatcheryRLTrainer
// ._compute_rewards and ._compute_advantages (axolotl-ai-cloud/axolotl).
// ε is Epsilon (1e-4, TRL's literal). "std" below is the sample std
// (Bessel, torch's default) unless said otherwise.
//
// SumThenNormalize ("sum_then_normalize", TRL's default), the
// `multi_objective_aggregation == "sum_then_normalize"` branch:
//
//	rewards  = (rewards_per_func * reward_weights).nansum(dim=1)
//	mean     = per-group mean of rewards
//	std      = group: per-group std of rewards (0 when num_generations == 1)
//	           batch: std of all rewards in the batch (0 when there is one)
//	advantages = rewards - mean
//	if scale_rewards != "none": advantages /= std + 1e-4
//
// With ScaleBatch the mean is still the group mean; only the divisor is the
// batch std (TRL, after the PPO-Lite paper). With ScaleNone nothing is
// divided (Dr. GRPO).
//
// NormalizeThenSum ("normalize_then_sum", GDPO), the
// `multi_objective_aggregation == "normalize_then_sum"` branch:
//
//	mean_k   = nanmean over the group, per function
//	std_k    = nanstd over the group, per function (Bessel; NaN when fewer
//	           than two values are present; 0 when num_generations == 1)
//	reward_k = (rewards_per_func - mean_k) / (std_k + 1e-4)
//	rewards  = (reward_k * reward_weights).nansum(dim=1)
//	advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-4)
//	           (std 0 when the batch has one rollout)
//
// A function whose group holds a single non-NaN value thus contributes
// nothing to that rollout (its std_k is NaN and nansum drops the term). TRL
// does not read scale_rewards in this branch: the per-group normalization and
// the batch normalization are both always applied.
//
// Hatchery ("hatchery"), Axolotl's Hatchery trainer: rewards are the
// unweighted sum of the functions; per group, mean and population variance
// (divided by the group size); std = sqrt(variance), or 1 when the variance
// is at most 1e-8; advantage = (reward - mean) / std, with no ε.
//
// # Groups
//
// TRL cuts the batch into consecutive blocks of num_generations rollouts and
// requires num_generations >= 2 for training. Here a group is the set of
// rollouts that share a group id, in any order and of any size, so a batch
// can mix prompts with different numbers of finished rollouts (async
// rollouts, ScoreStream). For every group of two or more rollouts the numbers
// are TRL's. A group of one rollout follows TRL's num_generations == 1 branch
// (std := 0, not torch's NaN for the std of one element), which gives it
// advantage 0 in SumThenNormalize with any scale and no contribution to the
// per-function sum in NormalizeThenSum; in Hatchery its variance is 0, so its
// std is 1 and its advantage 0.
//
// An empty group id puts the rollout in a group of its own: rollouts with no
// group are never pooled with one another by accident. TRL's groups are "the
// completions of one prompt", so a caller that wants TRL's grouping for
// rollouts sent without a group should use the prompt text as the id.
//
// # NaN, unscorable rows, and where this package departs from TRL
//
// NaN scores are skipped exactly where TRL skips them (nansum, nanmean,
// nanstd). Everything else is TRL's arithmetic, in float64 where TRL uses
// float32 tensors; results agree with an independent NumPy transcription of
// TRL's formulas to 1e-6 (testdata/trl_reference.py, run by the parity test).
// The points below are deliberate; each is a place where rewardd's contract
// (docs/aggregation.md) or its honesty about failures asks for something TRL
// does not do.
//
//  1. Unscorable rows. A rollout for which every function is NaN is
//     unscorable. TRL's nansum gives it reward 0, which then takes part in its
//     group's mean and std (and in the batch statistics), and TRL trains on
//     its advantage (0 - mean)/(std + ε) after a warning ("All reward
//     functions returned None ..."). Here its Reward is 0 and it takes part in
//     the statistics exactly as in TRL, so every other rollout's advantage is
//     TRL's; but its own Advantage is forced to 0, as the contract requires, so
//     a rollout nobody could score never pushes the policy. Result.Unscorable
//     counts them. (TRL PRs #5773 and #5775 proposed dropping such rows from
//     the statistics instead; neither was merged, so TRL's numbers are kept.)
//  2. No silent NaN or overflow. The contract says NaN advantages become 0. With
//     finite inputs TRL's formulas give NaN only on unscorable rows (rule 1
//     already zeroes them): nansum drops every other NaN term. The only other
//     way to get a non-finite value is float64 overflow (scores or weights
//     near 1e150 and beyond), and Compute reports that as an error instead of
//     turning it into a 0, because a silent 0 trains the model on noise.
//     ±Inf scores and non-finite weights are rejected for the same reason.
//  3. Scale is honoured only where the trainer has it. TRL silently ignores
//     scale_rewards under normalize_then_sum, and Hatchery has no such
//     option; Validate rejects ScaleBatch and ScaleNone with those modes
//     rather than accept a setting that would change nothing.
//  4. Hatchery weights. Axolotl sums its functions unweighted; Validate
//     rejects a weight other than 1 in Hatchery mode rather than ignore it.
//     Axolotl's `+=` would fail on a None; here NaN is skipped (nansum), as
//     the contract asks for every mode.
//  5. Reward in NormalizeThenSum. TRL's intermediate `rewards` in that branch
//     is the weighted sum of normalized scores; Result.Rewards reports the
//     weighted nansum of the raw scores instead (the same number
//     SumThenNormalize reports), since that is the reward a user reads; the
//     advantages are GDPO's.
package aggregate
