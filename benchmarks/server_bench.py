"""The language server's latency: ``didChange`` to ``publishDiagnostics`` on a 2,000-line training
script in a warm ``trllint server``, against LibCST parsing the same text.

    python benchmarks/server_bench.py [--lines 2000] [--repeat 20] [--script PATH]

The server runs as an editor runs it (``python -m trllint server`` over stdio, a pygls client
here). The file is opened and linted once (warm: rules loaded, project index built), then each
round sends the whole text with one line changed (a number in a learning-rate expression, so
the text, not the findings, changes) and times until the diagnostics for that version arrive.
The parse is ``libcst.parse_module`` of the same text in this process, the same number of
rounds, after one untimed parse. Medians; the ratio is the issue's measure (target <= 1.5).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HEADER = '''"""Fine-tuning with accelerate: a training script of the kind a lab keeps growing."""

import argparse
import math
import os

import torch
import torch.distributed as dist
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, get_scheduler

'''

# One stage of the pipeline: about 50 lines of real-looking training code. Stage 0 reads the
# config of the prepared model (one TRL001 with a safe fix); the others unwrap it first.
STAGE = '''

def build_optimizer_{i}(model, args):
    no_decay = ["bias", "LayerNorm.weight"]
    groups = [
        {{"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": args.weight_decay}},
        {{"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0}},
    ]
    return torch.optim.AdamW(groups, lr=args.learning_rate * {scale})


def evaluate_{i}(model, loader, accelerator):
    model.eval()
    losses = []
    for batch in loader:
        with torch.no_grad():
            outputs = model(**batch)
        loss = outputs.loss
        losses.append(accelerator.gather_for_metrics(loss.repeat(batch["input_ids"].shape[0])))
    losses = torch.cat(losses)
    try:
        perplexity = math.exp(torch.mean(losses))
    except OverflowError:
        perplexity = float("inf")
    model.train()
    return perplexity


def train_stage_{i}(args, model_name, train_loader, eval_loader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = AutoModelForCausalLM.from_pretrained(model_name)
    optimizer = build_optimizer_{i}(model, args)
    scheduler = get_scheduler("cosine", optimizer, num_warmup_steps=args.warmup, num_training_steps=args.steps)
    model, optimizer, train_loader, eval_loader, scheduler = accelerator.prepare(
        model, optimizer, train_loader, eval_loader, scheduler
    )
    for step, batch in enumerate(train_loader):
        with accelerator.accumulate(model):
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        if step % args.eval_every == 0:
            perplexity = evaluate_{i}(model, eval_loader, accelerator)
            accelerator.print(f"stage {i} step {{step}}: perplexity {{perplexity:.2f}}")
    vocab = {config_read}.config.vocab_size
    accelerator.wait_for_everyone()
    accelerator.unwrap_model(model).save_pretrained(os.path.join(args.output_dir, "stage_{i}"), save_function=accelerator.save)
    return vocab
'''


def training_script(lines: int) -> str:
    parts = [HEADER]
    i = 0
    while sum(part.count("\n") for part in parts) < lines:
        config_read = "model" if i == 0 else "accelerator.unwrap_model(model)"
        parts.append(STAGE.format(i=i, scale=1, config_read=config_read))
        i += 1
    return "".join(parts)


async def serve_latencies(script: Path, text: str, repeat: int) -> tuple[list[float], int]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("server-bench", "1")
    loop = asyncio.get_running_loop()
    arrived: dict[int, asyncio.Future[float]] = {}
    counts: dict[int, int] = {}
    uri = script.as_uri()

    def waiter(version: int) -> asyncio.Future[float]:
        return arrived.setdefault(version, loop.create_future())

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        # Stamped as it is read: no polling loop takes the CPU from the server meanwhile.
        if params.uri == uri and params.version is not None:
            counts[params.version] = len(params.diagnostics)
            future = waiter(params.version)
            if not future.done():
                future.set_result(time.perf_counter())

    await client.start_io(sys.executable, "-m", "trllint", "server", cwd=str(script.parent))
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), root_uri=script.parent.as_uri()))
    client.initialized(lsp.InitializedParams())

    async def wait(version: int) -> float:
        return await asyncio.wait_for(waiter(version), 120)

    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))
    await wait(1)
    # Warm-up edits, untimed: the first changes may pay for code paths the open did not take.
    version = 1
    latencies = []
    for round_ in range(repeat + 2):
        version += 1
        changed = text.replace("lr=args.learning_rate * 1)", f"lr=args.learning_rate * {version})", 1)
        sent = time.perf_counter()
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=version, uri=uri), [lsp.TextDocumentContentChangeWholeDocument(changed)]
            )
        )
        done = await wait(version)
        if round_ >= 2:
            latencies.append(done - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return latencies, counts[version]


def parse_times(text: str, repeat: int) -> list[float]:
    import libcst

    from trllint.app import memory

    # The collector as the server sets it (trllint.app.memory), so that both sides pay the same.
    memory.prepare()
    libcst.parse_module(text)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        libcst.parse_module(text)
        times.append(time.perf_counter() - start)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=2000, help="the generated script's length (default 2000)")
    parser.add_argument("--script", help="time this file instead of the generated script")
    parser.add_argument("--repeat", type=int, default=20, help="timed rounds of each (default 20)")
    parser.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "train.py"
        text = Path(args.script).read_text(encoding="utf-8") if args.script else training_script(args.lines)
        script.write_text(text, encoding="utf-8")
        # Interleaved halves, so that a machine that slows down mid-run hits both alike.
        half = max(args.repeat // 2, 1)
        parses = parse_times(text, half)
        latencies, findings = asyncio.run(serve_latencies(script, text, args.repeat))
        parses += parse_times(text, args.repeat - half)
    lines = text.count("\n")
    latency, parse = statistics.median(latencies), statistics.median(parses)
    result = {
        "lines": lines,
        "findings": findings,
        "rounds": args.repeat,
        "did_change_to_publish_s": round(latency, 4),
        "libcst_parse_s": round(parse, 4),
        "ratio": round(latency / parse, 2),
        "latency_min_max_s": [round(min(latencies), 4), round(max(latencies), 4)],
    }
    print(f"{lines}-line script, {findings} finding(s), {args.repeat} rounds (medians)")
    print(f"didChange -> publishDiagnostics: {latency * 1000:.0f} ms (min {min(latencies) * 1000:.0f}, max {max(latencies) * 1000:.0f})")
    print(f"libcst.parse_module, same text:  {parse * 1000:.0f} ms")
    print(f"ratio: {latency / parse:.2f} x (target <= 1.5)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
