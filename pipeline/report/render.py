"""Writers for a :class:`~pipeline.report.assemble.Grid`: Markdown, CSV, LaTeX and HTML.

Plain code, no table library: the layouts are small and fixed, and the output must be
byte-stable. An empty cell prints as "–" in Markdown and HTML, "--" (an en dash) in LaTeX, and
as an empty field in CSV. The HTML page is what ``snakemake --report`` shows inline.
"""

from __future__ import annotations

import csv
import html
import io
import itertools

from pipeline.report.assemble import Grid

DASH = "–"


def _spans(groups: list[str]) -> list[tuple[str, int, int]]:
    """(group, first column, column count) for each run of equal adjacent groups."""
    spans, start = [], 0
    for group, run in itertools.groupby(groups):
        width = len(list(run))
        spans.append((group, start, width))
        start += width
    return spans


def to_markdown(grid: Grid) -> str:
    def cell(text: str | None) -> str:
        return DASH if text is None else text.replace("|", "\\|")

    headers = [f"{group} {header}".strip() for group, header in zip(grid.groups, grid.headers)]
    lines = [
        f"### {grid.title}",
        "",
        "| " + " | ".join(cell(h) for h in headers) + " |",
        "|" + "|".join("---:" if numeric else ":---" for numeric in grid.numeric) + "|",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in grid.rows]
    lines += [""] + [f"- {note}" for note in grid.notes]
    return "\n".join(lines) + "\n"


def to_csv(grid: Grid) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(grid.headers)
    writer.writerows([["" if c is None else c for c in row] for row in grid.rows])
    return out.getvalue()


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "|": r"\textbar{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "≥": r"$\geq$",
    "−": "$-$",
    "–": "--",
}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(char, char) for char in text)


def to_latex(grid: Grid, label: str) -> str:
    def cell(text: str | None) -> str:
        return "--" if text is None else latex_escape(text)

    spec = "".join("r" if numeric else "l" for numeric in grid.numeric)
    lines = [
        "% Written by `python -m pipeline tables`; needs \\usepackage{booktabs}.",
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
    ]
    spans = _spans(grid.groups)
    if any(group for group, _, _ in spans):
        lines.append(
            " & ".join(
                rf"\multicolumn{{{width}}}{{c}}{{{latex_escape(group)}}}"
                if group and width > 1
                else latex_escape(group)
                if group
                else " & ".join([""] * width)
                for group, _, width in spans
            )
            + r" \\"
        )
        lines.append(
            " ".join(rf"\cmidrule(lr){{{start + 1}-{start + width}}}" for group, start, width in spans if group)
        )
    lines.append(" & ".join(cell(h) for h in grid.headers) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(cell(c) for c in row) + r" \\" for row in grid.rows]
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{latex_escape(grid.title)}}}",
        rf"\label{{tab:{label}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


STYLE = (
    "body{font-family:sans-serif;font-size:14px}table{border-collapse:collapse}"
    "th,td{padding:2px 8px;border-bottom:1px solid #ddd}td.n{text-align:right}"
    "tr.published td{color:#555}caption{font-weight:bold;text-align:left;padding:4px 0}"
)


NUMERIC_CLASS = ' class="n"'


def to_html(grid: Grid) -> str:
    def cell(text: str | None) -> str:
        return DASH if text is None else html.escape(text)

    lines = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{html.escape(grid.title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        "<table>",
        f"<caption>{html.escape(grid.title)}</caption>",
        "<thead>",
    ]
    spans = _spans(grid.groups)
    if any(group for group, _, _ in spans):
        lines.append(
            "<tr>" + "".join(f'<th colspan="{width}">{html.escape(group)}</th>' for group, _, width in spans) + "</tr>"
        )
    lines.append("<tr>" + "".join(f"<th>{cell(h)}</th>" for h in grid.headers) + "</tr>")
    lines.append("</thead><tbody>")
    for row in grid.rows:
        kind = ' class="published"' if (row[0] or "").startswith("published:") else ""
        lines.append(
            f"<tr{kind}>"
            + "".join(f"<td{NUMERIC_CLASS if numeric else ''}>{cell(c)}</td>" for c, numeric in zip(row, grid.numeric))
            + "</tr>"
        )
    lines.append("</tbody></table>")
    if grid.notes:
        lines.append("<ul>" + "".join(f"<li>{html.escape(note)}</li>" for note in grid.notes) + "</ul>")
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"
