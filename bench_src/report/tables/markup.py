"""The shared markup of a table for reading: a `Readable` (its formatted frame, title and caption)
rendered as Markdown (export/markdown.py, notebooks' plain text) or HTML (export/html.py, Jupyter),
always with every row."""
from __future__ import annotations

import html as html_module
from dataclasses import dataclass, field

import pandas as pd


@dataclass
class Readable:
    """A table formatted for reading: `frame` holds strings; `caption` the values every row shares."""

    frame: pd.DataFrame
    caption: str = ""
    title: str = ""
    constants: dict[str, str] = field(default_factory=dict)

    def to_markdown(self) -> str:
        lines = []
        if self.title:
            lines += [f"**{self.title}**", ""]
        if self.caption:
            lines += [self.caption, ""]
        if self.frame.empty:
            lines.append("(no rows)")
        else:
            escaped = self.frame.map(lambda v: str(v).replace("|", "\\|").replace("\n", " "))
            escaped.columns = [str(c).replace("|", "\\|") for c in escaped.columns]
            lines.append(escaped.to_markdown(index=False, disable_numparse=True))
        return "\n".join(lines) + "\n"

    def to_html(self, table_id: str | None = None) -> str:
        parts = []
        if self.title:
            parts.append(f"<p class='table-title'>{html_module.escape(self.title)}</p>")
        if self.caption:
            parts.append(f"<p class='caption'>{html_module.escape(self.caption)}</p>")
        if self.frame.empty:
            parts.append("<p class='empty'>(no rows)</p>")
        else:
            parts.append(self.frame.to_html(index=False, escape=True, border=0, classes="data", na_rep="",
                                            table_id=table_id))
        return "\n".join(parts)

    def _repr_html_(self) -> str:  # Jupyter shows every row, never pandas' truncated view
        return self.to_html()

    def __repr__(self) -> str:  # the plain-text form shows every row too
        return self.to_markdown()

    def __len__(self) -> int:
        return len(self.frame)


def from_markdown(block: str) -> Readable:
    """A pipe table written by `Readable.to_markdown` (a header, a line of dashes, the rows; no title
    or caption) read back, for text that carries a table inside its paragraphs (the Method)."""
    def cells(line: str) -> list[str]:
        parts, cell, escaped = [], "", False
        for ch in line.strip()[1:-1]:  # the text between the outer pipes
            if escaped:
                cell, escaped = cell + ch, False
            elif ch == "\\":
                escaped = True
            elif ch == "|":
                parts.append(cell.strip())
                cell = ""
            else:
                cell += ch
        return parts + [cell.strip()]

    lines = [line for line in block.strip().splitlines() if line.strip()]
    header, rows = cells(lines[0]), [cells(line) for line in lines[2:]]
    return Readable(pd.DataFrame(rows, columns=header))
