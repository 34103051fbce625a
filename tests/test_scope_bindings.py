"""core.cst.names.scope_bindings: the bindings of a scope's own body, read by the partitioning
fact (a name's plain values) and the rank test (a name bound only by a loop)."""

from __future__ import annotations

import textwrap

import libcst as cst

from trllint.core.cst.names import scope_bindings


def bindings_of(code: str, function: str | None = None):
    module = cst.parse_module(textwrap.dedent(code))
    if function is None:
        return scope_bindings(module)
    scope = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == function)
    return scope_bindings(scope)


def test_plain_values_loops_and_other_bindings():
    found = bindings_of(
        """
        def train(model, loader):
            ema = make_ema(model)
            ema: Module = ema.to(device)
            step: int
            for rank in range(world):
                pass
            a, b = pair()
            total += 1
            with open(p) as handle:
                pass
            try:
                pass
            except ValueError as error:
                pass
            if (n := len(loader)) > 0:
                pass
            import torch.distributed as dist
            import os.path
            global counter
            del a

            def inner():
                hidden = 1

            class Box:
                inside = 2

            scale = lambda x: (y := x)
        """,
        "train",
    )
    assert [cst.Module([]).code_for_node(b.value) for b in found["ema"]] == ["make_ema(model)", "ema.to(device)"]
    assert "step" not in found  # an annotation alone binds nothing
    assert [b.loop for b in found["rank"]] == [True]
    for name in ("a", "b", "total", "handle", "error", "n", "dist", "os", "counter", "inner", "Box"):
        assert found[name] and all(b.value is None and not b.loop for b in found[name]), name
    assert len(found["a"]) == 2  # unpacked, then deleted
    # Nested scopes keep their own names; parameters are not listed.
    for name in ("hidden", "inside", "y", "model", "loader"):
        assert name not in found, name
    assert found["scale"][0].value is not None


def test_a_module_scope_counts_the_globals_its_functions_take_over():
    found = bindings_of(
        """
        unet = build()

        def reset():
            global unet
            unet = other()
        """
    )
    assert [b.value is not None for b in found["unet"]] == [True, False]
    # In the function itself, `global unet` makes the name the module's: no plain value of its own.
    inside = bindings_of("def reset():\n    global unet\n    unet = other()\n", "reset")["unet"]
    assert [b.value is None for b in inside] == [True, False]


def test_read_through_and_declared_names():
    from trllint.core.cst.names import declared_names, dotted_name, read_through

    def read(code: str) -> str | None:
        return dotted_name(read_through(cst.parse_expression(code)))

    assert read('getattr(cfg, "fsdp_enable", False)') == "cfg.fsdp_enable"
    assert read('bool(getattr(args, "use_deepspeed"))') == "args.use_deepspeed"
    assert read("bool(flag)") == "flag"
    # A name computed at run time, or another call, is read as it is.
    assert read("getattr(cfg, name, False)") is None
    assert read("is_fsdp(cfg)") is None

    function = cst.parse_module("def f():\n    global a\n    def g():\n        nonlocal b\n").body[0]
    assert isinstance(function, cst.FunctionDef)
    assert declared_names(function) == {"a", "b"}
    assert declared_names(function, (cst.Global,)) == {"a"}
