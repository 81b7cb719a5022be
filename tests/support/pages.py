"""What the browser tests check on every page: that it fits the viewport (no sideways
scrolling at a phone's width), that axe-core finds nothing, and where its screenshots go.

axe-core is pinned in tests/support/axe (package.json and its package-lock.json, installed
with `npm ci` the first time a test needs it, as the TypeScript example bot's test does);
without Node.js and npm the checks are skipped (a failure under CARDARENA_REQUIRE_SERVICES=1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, ViewportSize

from tests.support.browsing import unavailable

AXE = Path(__file__).resolve().parent / "axe"
"""The pinned axe-core's package (package.json, package-lock.json; node_modules once installed)."""

PHONE: ViewportSize = {"width": 390, "height": 844}
"""A phone's viewport (an iPhone 12 to 15)."""
DESKTOP: ViewportSize = {"width": 1280, "height": 800}
"""A laptop's viewport."""

OVERFLOW = """() => {
  const root = document.documentElement;
  const width = root.clientWidth;
  const clipped = (node) => {
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return up.clientWidth <= width;
    }
    return false;
  };
  const wide = [];
  for (const node of document.body.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.bottom < 0) continue; // the skip link, above the page until it has the focus
    if ((box.right > width + 1 || box.left < -1) && !clipped(node)) {
      const id = node.dataset.testid ? `[data-testid="${node.dataset.testid}"]` : "";
      const where = `(${Math.round(box.left)}..${Math.round(box.right)})`;
      wide.push(`${node.tagName.toLowerCase()}${id} ${where}`);
    }
  }
  return { scrollWidth: root.scrollWidth, clientWidth: width, wide: wide.slice(0, 10) };
}"""
"""Returns the page's scroll width, its viewport width and the elements past its sides that no
box of their own clips (a table scrolling inside its own box is fine)."""


def artifacts() -> Path:
    """Returns the directory of the screenshots: CARDARENA_ARTIFACTS, else a temporary one."""
    named = os.environ.get("CARDARENA_ARTIFACTS")
    directory = Path(named) if named else Path(tempfile.gettempdir()) / "cardarena-artifacts"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def screenshot(page: Page, name: str) -> Path:
    """Saves a screenshot of the whole page as the artifact `name`.png; returns its path."""
    path = artifacts() / f"{name}.png"
    page.screenshot(path=path, full_page=True)
    return path


def assert_fits(page: Page, what: str) -> None:
    """Asserts that the page does not scroll sideways and that nothing sticks out of it."""
    found: dict[str, Any] = page.evaluate(OVERFLOW)
    assert found["scrollWidth"] <= found["clientWidth"], (
        f"{what} scrolls sideways: {found['scrollWidth']} px wide in {found['clientWidth']} px;"
        f" past its sides: {found['wide']}"
    )
    assert found["wide"] == [], f"{what}: elements past the viewport's sides: {found['wide']}"


@cache
def axe_source() -> str:
    """Returns axe-core's script, installing the pinned package first if it is missing."""
    script = AXE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        if shutil.which("npm") is None:
            unavailable("the accessibility check needs npm for axe-core (apt-get install npm)")
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=AXE,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"npm ci in {AXE} failed:\n{done.stdout}{done.stderr}"
    return script.read_text(encoding="utf-8")


def axe_violations(page: Page) -> list[str]:
    """Returns what axe-core finds on the page (WCAG 2.x A and AA, and its best practices),
    one line per rule and element."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated over the DevTools protocol: the pages' Content-Security-Policy forbids an
        # inline script, and the check must not loosen it.
        page.evaluate(axe_source() + "\n;undefined")
    found: list[str] = page.evaluate(
        """async () => {
          const result = await axe.run(document, {
            runOnly: {
              type: "tag",
              values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
            },
          });
          return result.violations.flatMap((rule) =>
            rule.nodes.map((node) => `${rule.id}: ${node.target.join(" ")}: ${node.failureSummary}`,
            ),
          );
        }"""
    )
    return found
