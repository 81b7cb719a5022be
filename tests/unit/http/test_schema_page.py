"""The documentation page `/schema` works offline: it names no other origin, and its Redoc
script is the pinned package's bundle, served by the service with a long cache header."""

from __future__ import annotations

import html.parser
import importlib.metadata
import re
import sys

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from services.game.http.openapi import docs


class Resources(html.parser.HTMLParser):
    """Collects every address a page loads: script, link, image, frame and style sources."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: list[str] = []
        self.inline_styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Keeps the `src` and `href` of every element, and notes a style element."""
        self._in_style = tag == "style"
        for name, value in attrs:
            if name in {"src", "href", "srcset", "data"} and value is not None:
                self.loaded.append(value)

    def handle_data(self, data: str) -> None:
        """Keeps the text of style elements (an `@import` or `url()` would load from it)."""
        if self._in_style:
            self.inline_styles.append(data)


def loaded_by(page: str) -> Resources:
    """Returns what `page` loads."""
    parser = Resources()
    parser.feed(page)
    return parser


def is_external(address: str) -> bool:
    """Returns whether `address` names an origin (absolute or scheme-relative)."""
    return address.lower().startswith(("http:", "https:", "//", "ws:", "wss:"))


@pytest.mark.parametrize("path", ["/schema", "/schema/", "/schema/redoc"])
def test_the_documentation_page_loads_nothing_from_another_origin(
    client: TestClient[Litestar], path: str
) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = loaded_by(response.text)
    assert page.loaded, "the page loads its script"
    assert [address for address in page.loaded if is_external(address)] == []
    head = response.text.split("<body", 1)[0].lower()
    for origin in ("googleapis", "gstatic", "cdn.", "jsdelivr", "redoc.ly", "unpkg"):
        assert origin not in head, origin
    for style in page.inline_styles:
        assert "@import" not in style
        assert "url(" not in style


def test_the_page_script_is_the_pinned_packages_redoc_bundle(
    client: TestClient[Litestar],
) -> None:
    page = loaded_by(client.get("/schema").text)
    scripts = [address for address in page.loaded if address.endswith(".js")]
    assert len(scripts) == 1
    version = importlib.metadata.version("drf-spectacular-sidecar")
    assert scripts[0] == f"/schema/assets/redoc-{version}.js"
    response = client.get(scripts[0])
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert response.content == docs.bundle()
    assert response.content.startswith(b"/*! For license information please see redoc")
    assert b"Redoc" in response.content


def test_the_bundle_is_found_in_the_package_without_importing_it() -> None:
    assert docs.bundle_path().is_file()
    assert docs.bundle_path().parts[-4:] == (
        "drf_spectacular_sidecar",
        "redoc",
        "bundles",
        "redoc.standalone.js",
    )
    # The package's __init__ imports Django, which is never installed: nothing imported it.
    assert "drf_spectacular_sidecar" not in sys.modules
    assert "django" not in sys.modules


def test_the_document_is_still_served_as_json_and_yaml(client: TestClient[Litestar]) -> None:
    assert client.get("/schema/openapi.json").json()["openapi"].startswith("3.1")
    yaml = client.get("/schema/openapi.yaml")
    assert (yaml.status_code, yaml.text.count("openapi: 3.1")) == (200, 1)


def test_the_page_forbids_every_other_origin_by_its_policy(client: TestClient[Litestar]) -> None:
    head = client.get("/schema").text.split("<body", 1)[0]
    assert head.index('http-equiv="Content-Security-Policy"') < head.index("<script")
    policy = head.split('content="', 1)[1].split('"', 1)[0]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    for sources in directives.values():
        assert "http" not in sources
        assert "*" not in sources


def test_the_served_bundle_names_no_image_of_another_origin(client: TestClient[Litestar]) -> None:
    assert docs.REDOCLY_LOGO in docs.bundle_path().read_bytes(), "the pinned bundle changed"
    version = importlib.metadata.version("drf-spectacular-sidecar")
    served = client.get(f"/schema/assets/redoc-{version}.js").content
    sources = re.findall(rb'src:\s*"([^"]*)"', served)
    assert sources == [b"data:,"]
    for origin in (b"cdn.", b"redoc.ly/redoc/logo"):
        assert origin not in served, origin
