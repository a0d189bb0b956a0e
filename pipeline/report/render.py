"""Writers for a :class:`~pipeline.report.assemble.Grid`: Markdown, CSV, LaTeX and HTML.

Plain code, no table library: the layouts are small and fixed, and the output must be
byte-stable. An empty cell prints as "–" in Markdown and HTML, "--" (an en dash) in LaTeX, and
as an empty field in CSV. The HTML page is what ``snakemake --report`` shows inline.

Model and run names come from the metrics files, so every writer neutralises what a name could
smuggle into its format (docs/behaviour.md): HTML and LaTeX escape their special characters,
Markdown escapes every character that opens an inline construct (no raw HTML, link, image, emphasis,
code or math, no extra column; :func:`markdown_escape`) and joins lines, and CSV
prefixes a text cell that a spreadsheet would run as a formula (one starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return; OWASP's "CSV Injection") with ``'``. Numbers, signed
ones included (``-0.9``, ``+5.9``), stay numbers; ordinary names are written unchanged.
"""

from __future__ import annotations

import csv
import html
import io
import itertools
import re

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


# Markdown: every construct a name could open is neutralised, so a name stays literal text in every
# CommonMark / GFM renderer, and an ordinary name is written unchanged:
# - "<" and ">" as entities (no raw HTML, no <autolink>), "&" too where it would spell an entity ("&lt;");
# - a backslash before "\\"; before "`", "*", "~" and "$" (GitHub's math) where the text holds two of
#   that character (one alone opens no code span, emphasis, strike-through or formula); before "_" at a
#   word's edge (inside a word it is literal anyway);
# - before a "]" that a "(", "[" or ":" follows, which alone makes "[x](url)", "![x](url)", "[x][ref]" and
#   "[x]: url" links, images or definitions ("[BERT-base]" stays as it is);
# - before the ":" of "scheme://", the "." of "www." and "@", which GFM turns into links by itself;
# - a line break as a space (a newline would end the table row or the list item); in a table cell also
#   before "|", so a name cannot add a column (:func:`markdown_cell`).
_MARKDOWN_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r\n": " ", "\r": " ", "\n": " "}
_MARKDOWN_PAIRED = "`*~$"  # escaped where the text holds two of them
_MARKDOWN_CONSTRUCTS = (
    r"\r\n|[\r\n<>]|&(?=#?\w+;)"  # entities and line breaks; "&" where it would spell an entity
    + r"|[\\@]"
    + r"|\](?=[(\[:])"  # the "]" of a link, an image, a reference or a definition
    + r"|(?<![^\W_])_|_(?![^\W_])"  # "_" at a word's edge: it could open or close emphasis
    + r"|(?<=[A-Za-z0-9])(?=://)"  # before the ":" of a URL scheme
    + r"|(?i:(?<=\bwww)\.)"  # the "." of "www."
)


def _markdown_replacement(match: re.Match) -> str:
    text = match.group()
    if text in _MARKDOWN_ENTITIES:
        return _MARKDOWN_ENTITIES[text]
    if text == "":  # before "://": escape the colon that follows
        return "\\"
    return "\\" + text


def markdown_escape(text: str, extra: str = "") -> str:
    """``text`` as literal Markdown text (a title, a note, a cell): no raw HTML, no link, image,
    emphasis, code or math, no extra line; ``extra``: characters escaped besides (``|`` in a table cell)."""
    escaped = extra + "".join(char for char in _MARKDOWN_PAIRED if text.count(char) > 1)
    pattern = _MARKDOWN_CONSTRUCTS + (f"|[{re.escape(escaped)}]" if escaped else "")
    return re.sub(pattern, _markdown_replacement, text)


def markdown_cell(text: str | None) -> str:
    """``text`` as the literal text of a Markdown table cell; "–" for no value."""
    return DASH if text is None else markdown_escape(text, extra="|")


def to_markdown(grid: Grid) -> str:
    headers = [f"{group} {header}".strip() for group, header in zip(grid.groups, grid.headers)]
    lines = [
        f"### {markdown_escape(grid.title)}",
        "",
        "| " + " | ".join(markdown_cell(h) for h in headers) + " |",
        "|" + "|".join("---:" if numeric else ":---" for numeric in grid.numeric) + "|",
    ]
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in grid.rows]
    lines += [""] + [f"- {markdown_escape(note)}" for note in grid.notes]
    return "\n".join(lines) + "\n"


# CSV: what a spreadsheet reads as a formula (OWASP, "CSV Injection"), and what it reads as a number.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")


def csv_cell(text: str | None) -> str:
    """A CSV field: empty for no value, ``'`` before a text that would start a formula, numbers as they
    are. A carriage return becomes a line feed: the writer quotes a field holding its line terminator
    ("\\n") but not a bare "\\r", which readers take for the end of the row."""
    if text is None:
        return ""
    neutral = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith(FORMULA_START) and not NUMBER.fullmatch(text):
        return "'" + neutral
    return neutral


def to_csv(grid: Grid) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([csv_cell(header) for header in grid.headers])
    writer.writerows([[csv_cell(c) for c in row] for row in grid.rows])
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
