"""TRL007 runtime scenario: TODO a small training script with the bug.

Run under ``accelerate launch`` by tests/runtime/test_trl007_sharded_generate_out_of_step.py, as written (it must fail with
the real error, or log a wrong number) and after ``trllint --fix`` rewrote a copy (it must run and
be right). Keep it tiny: a few steps of a small model on two CPU ranks over gloo.
"""

raise SystemExit("TODO: write the TRL007 scenario")
