"""The reproduction scoreboard as Markdown and as the report's HTML page (pipeline/scoreboard/scoreboard.py
builds it). Both are written from the same blocks of plain text, each escaped once, for its own format
(:func:`render.markdown_cell` for Markdown, ``html.escape`` for HTML), as in the tables: a name from a
run shows as written in both."""

from __future__ import annotations

import html

from pipeline.report import render


def _number(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ours(v: dict | None) -> str:
    if v is None:
        return "–"
    if v.get("mean") is None:
        return v["label"]
    spread = f" ± {v['std']:.2f}" if v.get("std") is not None else ""
    return f"{v['mean']:.2f}{spread} (n = {v['n']})"


def _verdict_text(claim: dict) -> str:
    text = claim["verdict"]
    if claim["verdict"] in ("holds", "inconclusive", "reversed", "untested"):
        if not claim["comparable"]:
            text += " (not comparable at this scale: the run's models are not the paper's)"
        if claim.get("judged_on"):
            text += f"; judged on {', '.join(claim['judged_on']['columns'])}: {claim['judged_on']['why']}"
        if claim.get("seeds"):
            text += f"; {claim['seeds']}"
    if claim.get("why"):
        text += f"; {claim['why']}"
    if claim.get("beyond"):
        text += f"; not judged by this claim: {claim['beyond']}"
    return text


def _count(number: int, verdict: str) -> str:
    """ "1 holds", "2 hold"; the other verdicts read the same in both numbers."""
    return f"{number} {'hold' if verdict == 'holds' and number != 1 else verdict}"


def verdict_counts(counts: dict, total: int) -> str:
    tested = ", ".join(_count(counts[v], v) for v in ("holds", "inconclusive", "reversed"))
    return f"{tested}; {counts['untested']} untested, {counts['not run']} not run (of {total})"


def _claim_text(claim: dict) -> str:
    columns = ", ".join(claim["columns"])
    scope = columns if len(claim["columns"]) == 1 else f"at least {claim['at_least']} of {columns}"
    text = f"{claim['id']}: “{claim['quote']}” ({claim['where']}; {claim['table']}: {scope})"
    if claim.get("derived"):
        text += f" [table-derived: {claim['derived']}]"
    return text


def _p_text(result: dict) -> str:
    """A tested result's p-value and, in a family, the p it was decided on for "holds" (Holm's, or its own
    under an intersection–union test) and which adjustment it got."""
    if result.get("p") is None:
        return ""
    text = f"p = {result['p']:.3f}"
    if result.get("p_holm") is not None:
        text += f" (Holm-adjusted {result['p_holm']:.3f})"
    if result.get("adjustment"):
        text += f"; {result['adjustment']}"
    return text


def _pair_cells(claim: dict, pair: dict) -> list[str]:
    if not pair:
        sides, difference, test, detectable = "", None, "", None
    elif pair.get("columns"):
        column_text = lambda c: (
            f"{c['column']} {_ours(c.get('higher'))} vs {_ours(c.get('lower'))} → {c['verdict']}"
            + (f" ({_p_text(c)})" if c.get("p") is not None else "")
        )
        sides = f"{pair['higher']['label']} vs {pair['lower']['label']}: " + "; ".join(
            column_text(c) for c in pair["columns"]
        )
        difference, test, detectable = None, f"{pair.get('columns_holding', '')} columns hold", None
    else:
        sides = f"{pair['higher']['label']} {_ours(pair['higher'])} vs {pair['lower']['label']} {_ours(pair['lower'])}"
        difference, detectable = pair.get("difference"), pair.get("detectable")
        test = pair.get("test", "") + (f", {_p_text(pair)}" if pair.get("p") is not None else "")
    if claim.get("judged_on"):
        paper = _number(claim["judged_on"]["paper_difference"])
    elif claim.get("paper_columns_higher"):
        paper = f"higher on {claim['paper_columns_higher']}"
    else:
        paper = _number(claim["paper_difference"])
    return [
        _claim_text(claim),
        claim["paper"],
        _verdict_text(claim),
        sides,
        _number(difference),
        paper,
        test,
        _number(detectable),
    ]


def blocks(board: dict) -> list[tuple]:
    """("h", level, text), ("p", text) or ("table", headers, numeric columns, rows[, each row's verdict]):
    plain text throughout."""
    counts = board["claim_counts"]
    out: list[tuple] = [("h", 1, "Reproduction scoreboard")]
    if board.get("rehearsal"):
        out.append(
            (
                "p",
                (
                    f"Rehearsal {board['run']}: its models are stand-ins (tiny random models, a few steps), so no claim "
                    f"is judged and no published number is compared; the {len(board['claims'])} claims are listed below."
                ),
            )
        )
    else:
        tests = "; ".join(board.get("tests") or []) or "none could run"
        out.append(
            (
                "p",
                (
                    f"Claims: {verdict_counts(counts, len(board['claims']))}; {board['comparable_claims']} judged on "
                    "the papers' own models. A verdict is a one-sided test at α = 2.5% each way (holds and reversed "
                    "together at most 5% on equal models): Welch's t-test across seeds where both sides have several "
                    "with a spread; else a test over the items both models were scored on (McNemar's exact test for "
                    "an accuracy, a paired bootstrap over items or pairs, a cluster bootstrap over word pairs, across "
                    "levels, for analogy). A claim that needs all of its columns or pairs holds where each holds at "
                    "its own level (an intersection–union test); at least k of N, and any reversal, are counted on "
                    "Holm's adjusted p-values. Where neither can run, the claim is untested: the "
                    f"sign of a difference tells no effect from noise. Tests used in this run: {tests}."
                ),
            )
        )
    headers = [
        "claim",
        "paper",
        "verdict",
        "ours: higher vs lower",
        "Δ ours",
        "Δ paper",
        "test",
        "smallest detectable Δ",
    ]
    rows, verdicts = [], []
    for claim in board["claims"]:
        pairs = [p for p in claim["pairs"] if p["verdict"] != "not run"] or [{}]
        rows += [_pair_cells(claim, pair) for pair in pairs]
        verdicts += [claim["verdict"]] * len(pairs)
    out.append(("table", headers, [False, False, False, False, True, True, False, True], rows, verdicts))
    published_counts = board["published_counts"]
    out += [
        ("h", 2, "Published numbers"),
        (
            "p",
            (
                f"{published_counts['mapped_rows']} published rows are mapped to runs of this config by the plan; "
                f"{published_counts['compared']} numbers compared, {published_counts['not_run']} not run, "
                f"{published_counts['within_seed_spread']} inside the 95% interval of our seeds' mean."
            ),
        ),
    ]
    if board["published_numbers"]:
        inside_text = {True: "yes", False: "no", None: "cannot tell (n < 2 or no spread)"}
        out.append(
            (
                "table",
                ["table", "paper row", "run", "column", "ours", "paper", "Δ", "inside our seeds' 95% interval"],
                [False, False, False, False, True, True, True, False],
                [
                    [
                        n["table"],
                        f"{n['row']} ({n['source']})",
                        n["label"],
                        n["column"],
                        _ours(n["ours"]),
                        f"{n['paper']:g}",
                        _number(n.get("delta")),
                        inside_text[n.get("within_seed_spread")] if n["ours"] else "not run",
                    ]
                    for n in board["published_numbers"]
                ],
            )
        )
    else:
        out.append(
            (
                "p",
                (
                    "The plan maps no published row to a run of this config (its models are not the papers'): there "
                    "is no published number to put ours beside. The claims above are judged on this run's own models."
                ),
            )
        )
    return out


def markdown(board: dict) -> str:
    lines = []
    for block in blocks(board):
        if block[0] == "h":
            lines += ["#" * block[1] + " " + render.markdown_escape(block[2]), ""]
        elif block[0] == "p":
            lines += [render.markdown_escape(block[1]), ""]
        else:
            headers, numeric, rows = block[1:4]
            lines.append("| " + " | ".join(render.markdown_cell(h) for h in headers) + " |")
            lines.append("|" + "|".join("---:" if right else "---" for right in numeric) + "|")
            lines += ["| " + " | ".join(render.markdown_cell(c) for c in row) + " |" for row in rows]
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# a verdict's colour in the browser: its cell's class (verdict-holds, verdict-not-run, ...)
VERDICT_STYLE = """<style>
td.verdict-holds { background: #d4edda; }
td.verdict-reversed { background: #f8d7da; }
td.verdict-inconclusive { background: #fff3cd; }
td.verdict-untested, td.verdict-not-run, td.verdict-not-judged { background: #e9ecef; color: #495057; }
</style>"""
VERDICT_COLUMN = 2  # the claims table's verdict cell


def verdict_class(verdict: str) -> str:
    return "verdict-" + verdict.replace(" ", "-")


def to_html(board: dict) -> str:
    """The scoreboard as one HTML page (the report's first section), each text escaped once for HTML, each
    verdict's cell coloured by its class."""
    out = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>Reproduction scoreboard</title>",
        VERDICT_STYLE,
        "</head><body>",
    ]
    for block in blocks(board):
        if block[0] == "h":
            out.append(f"<h{block[1]}>{html.escape(block[2])}</h{block[1]}>")
        elif block[0] == "p":
            out.append(f"<p>{html.escape(block[1])}</p>")
        else:
            headers, rows = block[1], block[3]
            verdicts = block[4] if len(block) > 4 else [None] * len(rows)
            out.append("<table border='1' cellspacing='0' cellpadding='3'>")
            out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>")
            for row, verdict in zip(rows, verdicts):
                cells = [
                    f"<td class='{verdict_class(verdict)}'>" if verdict and i == VERDICT_COLUMN else "<td>"
                    for i in range(len(row))
                ]
                out.append("<tr>" + "".join(f"{td}{html.escape(c)}</td>" for td, c in zip(cells, row)) + "</tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
