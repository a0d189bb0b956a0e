"""The plan's outputs (pipeline/report/plan.py): the GPU budget over its jobs and the Markdown table."""

from __future__ import annotations


def deviation_text(d: dict) -> str:
    if d["ours"] is None:
        return f"{d['key']}: {d['why']} (paper {d['paper']})"
    return f"{d['key']}: {d['ours']} vs {d['paper']}"


def budget(records: list[dict]) -> dict:
    """GPU-hours by rule over the planned jobs, each job counted once however many rows it serves."""
    jobs: dict[tuple[str, str], float] = {}
    for r in records:
        if r["status"] != "planned":
            continue
        settings = r.get("settings", {})
        if r.get("gpu_hours") and ("objective" in settings or "recipe" in settings or "lr_decay" in settings):
            rule = "pretrain" if "objective" in settings else "finetune" if "recipe" in settings else "bilstm"
            jobs[(rule, r["label"])] = r["gpu_hours"]
        down = r.get("downstream", {})
        if down.get("gpu_hours"):
            jobs[(f"classify {down['benchmark']}", r["label"])] = down["gpu_hours"]
    by_rule: dict[str, float] = {}
    for (rule, _), hours in jobs.items():
        by_rule[rule] = by_rule.get(rule, 0.0) + hours
    largest = sorted(jobs.items(), key=lambda item: -item[1])[:5]
    return {
        "total": sum(jobs.values()),
        "by_rule": by_rule,
        "largest": [{"rule": rule, "label": label, "gpu_hours": hours} for (rule, label), hours in largest],
    }


def markdown(records: list[dict], assumption: str) -> str:
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
        notes += [f"{e['key']}: paper {e['paper']}, released code {e['released']}" for e in r.get("released", [])]
        hours = r.get("gpu_hours")
        lines.append(
            f"| {r['paper']} | {r['table']} | {r['row']} | {r['status']} | {r.get('label', r.get('reason', ''))} | "
            f"{deviations} | {'; '.join(notes)} | {'' if hours is None else f'{hours:,.2f}'} |"
        )
    whys = {c["key"]: c["why"] for r in records for c in r.get("choices", [])}
    if whys:  # each interpretation once, with what it departs from (paper_settings.yaml, choices)
        lines += ["", "Our choices, and why:"]
        lines += [f"- {key}: {why}" for key, why in whys.items()]
    total = budget(records)
    lines += ["", f"GPU budget of the planned rows: {total['total']:,.1f} GPU-hours"]
    lines += [f"- {rule}: {hours:,.1f}" for rule, hours in sorted(total["by_rule"].items())]
    lines += [f"- largest: {j['rule']} {j['label']} {j['gpu_hours']:,.1f}" for j in total["largest"]]
    return "\n".join(lines) + "\n"
