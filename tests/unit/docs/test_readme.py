"""The README is a landing page: short, and every relative link in it leads to a file of the
repository (the documentation site's pages are checked by `mkdocs build --strict` in CI)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
"""A Markdown link's or image's target: `[text](target)` or `![alt](target "title")`."""


def relative_links(text: str) -> list[str]:
    """Returns the targets of the Markdown links of `text` that name no scheme or host."""
    return [target for target in LINK.findall(text) if not urlsplit(target).scheme]


def test_the_readme_is_a_landing_page_of_at_most_150_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()

    assert len(lines) <= 150, f"README.md has {len(lines)} lines: move the detail into docs/"


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    targets = relative_links(README.read_text(encoding="utf-8"))

    assert targets, "the README links into the docs"
    missing = [
        target
        for target in targets
        if not urlsplit(target).path or not (ROOT / unquote(urlsplit(target).path)).exists()
    ]
    assert missing == []


def test_a_link_to_a_missing_file_is_found() -> None:
    text = "[a](docs/index.md) [b](docs/nowhere.md#x) [c](https://example.org/x.md) ![d](e.png)"

    assert relative_links(text) == ["docs/index.md", "docs/nowhere.md#x", "e.png"]
