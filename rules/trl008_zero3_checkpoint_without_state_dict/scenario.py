"""TRL008 runtime scenario: TODO a small training script with the bug.

Run under ``accelerate launch`` by tests/runtime/test_trl008_zero3_checkpoint_without_state_dict.py, as written (it must fail with
the real error, or log a wrong number) and after ``trllint --fix`` rewrote a copy (it must run and
be right). Keep it tiny: a few steps of a small model on two CPU ranks over gloo.
"""

raise SystemExit("TODO: write the TRL008 scenario")
