"""The plan's outputs (pipeline/plan/plan.py): the GPU budget over its jobs and the Markdown table."""

from __future__ import annotations

import math


def optimizer_name(name: str, weight_decay: float) -> str:
    """Adam(W) as the papers name it: AdamW without weight decay is Adam."""
    return "Adam" if weight_decay == 0 and name in ("Adam", "AdamW") else f"{name} (weight decay {weight_decay:g})"


def deviation_text(d: dict) -> str:
    if d["ours"] is None:
        return f"{d['key']}: {d['why']} (paper {d['paper']})"
    text = f"{d['key']}: {d['ours']} vs {d['paper']}"
    # a deviation a config key undoes names it (the n-gram short-document rules: paper_settings.yaml)
    return text + (f" (the papers' rule: {d['switch']})" if d.get("switch") else "")


def released_text(e: dict) -> str:
    if e["key"] == "launch_script":  # the experiment's code has no released launch script: say so
        return f"released code: {e['source']}"
    return f"{e['key']}: paper {e['paper']}, released code {e['released']}"


def planned_jobs(records: list[dict], extra: list[dict] | None = None) -> dict[tuple[str, str], tuple[float, float]]:
    """{(rule, label): (GPU-hours, FLOPs hours)} of the planned jobs, each counted once however many rows it
    serves, with ``extra`` jobs the config runs that no published row reads (``{rule, label, gpu_hours,
    flops_hours}``): what the budget sums and the schedule (pipeline/plan/schedule.py) places."""
    jobs: dict[tuple[str, str], tuple[float, float]] = {}
    for r in records:
        if r["status"] != "planned":
            continue
        settings = r.get("settings", {})
        if r.get("gpu_hours") and ("objective" in settings or "recipe" in settings or "lr_decay" in settings):
            rule = "pretrain" if "objective" in settings else "finetune" if "recipe" in settings else "bilstm"
            jobs[(rule, r["label"])] = (r["gpu_hours"], r.get("flops_hours") or 0.0)
        down = r.get("downstream", {})
        if down.get("gpu_hours"):
            jobs[(f"classify {down['benchmark']}", r["label"])] = (down["gpu_hours"], down.get("flops_hours") or 0.0)
    for job in extra or []:
        jobs.setdefault((job["rule"], job["label"]), (job["gpu_hours"], job["flops_hours"]))
    return jobs


def budget(records: list[dict], extra: list[dict] | None = None) -> dict:
    """GPU-hours by rule over the planned jobs (:func:`planned_jobs`); beside each total, the FLOPs time of the
    same work at the stated MFU (``flops_total``, ``flops_by_rule``)."""
    jobs = planned_jobs(records, extra)
    by_rule: dict[str, float] = {}
    flops_by_rule: dict[str, float] = {}
    for (rule, _), (hours, flops) in jobs.items():
        by_rule[rule] = by_rule.get(rule, 0.0) + hours
        flops_by_rule[rule] = flops_by_rule.get(rule, 0.0) + flops
    largest = sorted(jobs.items(), key=lambda item: -item[1][0])[:5]
    return {
        "total": sum(hours for hours, _ in jobs.values()),
        "by_rule": by_rule,
        "flops_total": sum(flops for _, flops in jobs.values()),
        "flops_by_rule": flops_by_rule,
        "not_in_rows": sorted(f"{job['rule']} {job['label']}" for job in extra or []),
        "largest": [
            {"rule": rule, "label": label, "gpu_hours": hours, "flops_hours": flops}
            for (rule, label), (hours, flops) in largest
        ],
    }


def non_finite(value, path: str = "") -> str | None:
    """The path of the first number in ``value`` (nested dicts and lists) that is not finite; None if all are."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "(top)"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite(item, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def markdown(records: list[dict], assumption: str, total: dict | None = None) -> str:
    lines = [
        f"GPU-hours: {assumption}",
        "",
        "| paper | table | row | status | run | deviations | our choices; released code | GPU-hours |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        blocks = [r.get("deviations", []), r.get("downstream", {}).get("deviations", [])]
        deviations = "; ".join(deviation_text(d) for block in blocks for d in block)
        notes = [
            f"{c['key']}: {c['ours']}" + (f" (or {c['alternative']})" if c.get("alternative") else "")
            for c in r.get("choices", [])
        ]
        notes += [released_text(e) for e in r.get("released", [])]
        hours = r.get("gpu_hours")
        lines.append(
            f"| {r['paper']} | {r['table']} | {r['row']} | {r['status']} | {r.get('label', r.get('reason', ''))} | "
            f"{deviations} | {'; '.join(notes)} | {'' if hours is None else f'{hours:,.2f}'} |"
        )
    # each interpretation once, with what it departs from (paper_settings.yaml, choices): a key whose value
    # has its own reason (misad_loss equation, ELECTRA's glue_pooler) once per reason
    whys = dict.fromkeys((c["key"], " ".join(c["why"].split())) for r in records for c in r.get("choices", []))
    if whys:
        lines += ["", "Our choices, and why:"]
        lines += [f"- {key}: {why}" for key, why in whys]
    # the deviations of the project's own rules (n-gram short documents, what export discards), each once
    departures = dict.fromkeys(
        (d["key"], d["why"])
        for r in records
        for d in r.get("deviations", [])
        if d.get("switch") or d["key"] == "glue_pooler"
    )
    if departures:
        lines += ["", "Our rules where the papers or the released code have another, and why:"]
        lines += [f"- {key}: {why}" for key, why in departures]
    total = total or budget(records)
    flops = total["flops_by_rule"]
    lines += [
        "",
        (
            f"GPU budget of the planned jobs: {total['total']:,.1f} GPU-hours "
            f"(FLOPs time of the same work at the stated MFU: {total['flops_total']:,.1f})"
        ),
    ]
    lines += [
        f"- {rule}: {hours:,.1f} (FLOPs time {flops.get(rule, 0.0):,.1f})"
        for rule, hours in sorted(total["by_rule"].items())
    ]
    if total.get("not_in_rows"):
        lines += [f"- counted, though no published row reads it: {', '.join(total['not_in_rows'])}"]
    lines += [
        f"- largest: {j['rule']} {j['label']} {j['gpu_hours']:,.1f} (FLOPs time {j['flops_hours']:,.1f})"
        for j in total["largest"]
    ]
    if total.get("classify_tokens"):
        lines += ["", token_sources_text(total["classify_tokens"])]
    if total.get("fused_stacks"):
        lines += ["", fused_stacks_text(total["fused_stacks"])]
    return "\n".join(lines) + "\n"


def token_sources_text(sources: list[dict]) -> str:
    """The plan's lines on what a GLUE / CLUE sequence costs (issue 48 §2): per task, the tokens measured on a
    data-root file (pipeline/budget/classify_tokens.yaml), or the max_length upper bound and why."""
    lines = [
        (
            "GLUE / CLUE tokens per sequence (pipeline/plan/plan_costs.py): padded as classify pads them, measured on "
            "the data root's files by python -m pipeline measure-tokens (pipeline/budget/classify_tokens.yaml); where not "
            "measured, the task's max_length, an upper bound:"
        )
    ]
    for s in sources:
        name = f"{s['benchmark']} {s['task']}"
        if s["source"] != "measured":
            lines.append(f"- {name}: upper bound (max_length): {s['why']}")
            continue
        kind = f"{s['split']} file" + (", a substitute for the release" if s["substitute"] else "")
        line = f"- {name}: measured on {s['file']} ({kind}; tokenizer {s['tokenizer']})"
        if s.get("note"):
            line += f"; {s['note']}"
        if s.get("unmeasured"):
            line += f"; upper bound at {', '.join(s['unmeasured'])} (not measured)"
        lines.append(line)
    return "\n".join(lines)


def fused_stacks_text(stacks: list[dict]) -> str:
    """The plan's lines on fused fine-tuning (issue 41 §2): per backbone, the runs of a grid setting that
    step together, and per batch x length the most runs one GPU holds as one stacked model and the stack
    costed (pipeline/budget/memory.py, ``largest_fused_members``)."""
    lines = [
        (
            "Fused GLUE / CLUE runs (classify.fuse, pipeline/classify/fused_training.py): runs of a grid setting "
            "stacked in one model, at most what one 80 GB GPU holds (weights, gradients, AdamW moments and "
            "activations per run; pipeline/budget/memory.py):"
        )
    ]
    for s in stacks:
        shapes = "; ".join(
            f"{shape}: {' + '.join(map(str, s['stacks'][shape]))} ({most} fit)"
            for shape, most in s["fits_one_gpu"].items()
        )
        lines.append(
            f"- {s['benchmark']} {s['backbone']}: {s['runs_per_setting']} runs per setting "
            f"({len(s['models'])} model(s)); stacks per batch x length: {shapes}"
        )
    return "\n".join(lines)
