"""The reproduction scoreboard as Markdown and as the report's HTML page (pipeline/report/scoreboard.py
builds it). Every name that came from a run is escaped for its format (:func:`render.markdown_cell`,
``html.escape``), as in the tables."""

from __future__ import annotations

import html
import re

from pipeline.report import render


def _number(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ours(v: dict | None) -> str:
    if v is None:
        return "–"
    spread = f" ± {v['std']:.2f}" if v.get("std") is not None else ""
    return f"{v['mean']:.2f}{spread} (n = {v['n']})"


def _verdict_text(claim: dict) -> str:
    text = claim["verdict"]
    if claim["verdict"] != "not run" and not claim["comparable"]:
        text += " (not comparable at this scale: the run's models are not the paper's)"
    return text


def markdown(board: dict) -> str:
    cell = render.markdown_cell
    counts = board["claim_counts"]
    lines = [
        "# Reproduction scoreboard",
        "",
        (
            f"**Claims:** {counts['holds']} hold, {counts['does not hold']} do not hold, {counts['not run']} not run "
            f"(of {len(board['claims'])}); {board['comparable_claims']} judged on the papers' own models."
        ),
        "",
        "| claim | paper | verdict | ours: higher vs lower | Δ ours | Δ paper | test | smallest detectable Δ |",
        "|---|---|---|---|---:|---:|---|---:|",
    ]
    for claim in board["claims"]:
        pairs = [p for p in claim["pairs"] if p["verdict"] != "not run"] or [{}]
        for pair in pairs:
            sides = (
                f"{cell(pair['higher']['label'])} {_ours(pair['higher'])} vs {cell(pair['lower']['label'])} {_ours(pair['lower'])}"
                if pair
                else cell(claim.get("why", ""))
            )
            test = pair.get("test", "") + (f", p = {pair['p']:.3f}" if pair.get("p") is not None else "")
            lines.append(
                f"| {cell(claim['id'])}: “{cell(claim['quote'])}” ({cell(claim['where'])}; {claim['table']}.{claim['column']}) "
                f"| {cell(claim['paper'])} | {cell(_verdict_text(claim))} | {sides} | {_number(pair.get('difference'))} "
                f"| {_number(claim['paper_difference'])} | {cell(test)} | {_number(pair.get('detectable'))} |"
            )
    published_counts = board["published_counts"]
    lines += [
        "",
        "## Published numbers",
        "",
        (
            f"{published_counts['mapped_rows']} published rows are mapped to runs of this config by the plan; "
            f"{published_counts['compared']} numbers compared, {published_counts['not_run']} not run, "
            f"{published_counts['within_seed_spread']} inside the 95% interval of our seeds' mean."
        ),
        "",
    ]
    if board["published_numbers"]:
        lines += [
            "| table | paper row | run | column | ours | paper | Δ | inside our seeds' 95% interval |",
            "|---|---|---|---|---:|---:|---:|---|",
        ]
        for n in board["published_numbers"]:
            inside = {True: "yes", False: "no", None: "cannot tell (n < 2 or no spread)"}[n.get("within_seed_spread")]
            lines.append(
                f"| {n['table']} | {cell(n['row'])} ({n['source']}) | {cell(n['label'])} | {n['column']} "
                f"| {_ours(n['ours'])} | {n['paper']:g} | {_number(n.get('delta'))} | {inside if n['ours'] else 'not run'} |"
            )
    else:
        lines.append(
            "The plan maps no published row to a run of this config (its models are not the papers'): there is no "
            "published number to put ours beside. The claims above are judged on this run's own models."
        )
    return "\n".join(lines) + "\n"


def to_html(board: dict) -> str:
    """The scoreboard as one HTML page (the report's first section): the Markdown tables as HTML."""
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'><title>Reproduction scoreboard</title></head><body>"]
    for block in markdown(board).split("\n\n"):
        rows = block.strip().splitlines()
        if rows and rows[0].startswith("|"):
            out.append("<table border='1' cellspacing='0' cellpadding='3'>")
            for i, line in enumerate(r for r in rows if not set(r) <= set("|-: ")):
                tag = "th" if i == 0 else "td"
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
                out.append("<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>")
            out.append("</table>")
        elif rows and rows[0].startswith("#"):
            level = len(rows[0]) - len(rows[0].lstrip("#"))
            out.append(f"<h{level}>{html.escape(rows[0].lstrip('# '))}</h{level}>")
        elif rows:
            out.append(f"<p>{html.escape(' '.join(rows))}</p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
