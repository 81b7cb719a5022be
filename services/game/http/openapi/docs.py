"""The documentation page `/schema` (Redoc), served whole by the service: its script comes from
the pinned package drf-spectacular-sidecar, so the page needs no CDN and works offline."""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Any

from litestar import Request, Response, Router, get
from litestar._openapi.plugin import handle_schema_path_not_found
from litestar.openapi.plugins import OpenAPIRenderPlugin, RedocRenderPlugin, YamlRenderPlugin
from litestar.routes import HTTPRoute

SIDECAR = "drf_spectacular_sidecar"
"""The package that ships the Redoc bundle (for Django; Django is never installed or imported:
the bundle is found by path, without importing the package)."""

BUNDLE = Path("static", SIDECAR, "redoc", "bundles", "redoc.standalone.js")
"""Where the Redoc bundle lies inside the package's directory."""

REDOCLY_LOGO = b'src:"https://cdn.redoc.ly/redoc/logo-mini.svg"'
"""The Redocly logo of the bundle's side menu ("API docs by Redocly"), from Redocly's CDN."""

NO_LOGO = b'src:"data:,"'
"""An image of no bytes in its place: it fails to decode, and Redoc's `onError` drops it."""

CACHE_CONTROL = "public, max-age=31536000, immutable"
"""The bundle's URL names the package's version, so a client may keep it for a year."""

NO_FAVICON = "<link rel='icon' href='data:,'>"
"""A favicon of no bytes: the browser asks no origin for one."""

POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:;"
    " connect-src 'self'; object-src 'none'; base-uri 'none'"
)
"""The page's content security policy: nothing from another origin (Redoc's styles and its
start-up script are inline, its search a blob worker)."""

STYLE = (
    "<style>body { margin: 0; padding: 0 } img[src^='http:'], img[src^='https:']"
    " { display: none }</style>"
)
"""The page's style: Litestar's, and no room for an image the policy would refuse."""


def bundle_path() -> Path:
    """Returns the path of the Redoc bundle in the installed package (never importing it)."""
    spec = importlib.util.find_spec(SIDECAR)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the package {SIDECAR} (drf-spectacular-sidecar) is not installed")
    return Path(next(iter(spec.submodule_search_locations)), BUNDLE)


@functools.cache
def bundle() -> bytes:
    """Returns the Redoc bundle's bytes, read once per process, without the Redocly logo of its
    side menu (`NO_LOGO`): the page then asks no other origin for anything, not even a
    request the policy would refuse."""
    return bundle_path().read_bytes().replace(REDOCLY_LOGO, NO_LOGO)


def bundle_url_path() -> str:
    """Returns the path of the bundle under the schema router, naming the package's version."""
    return f"/assets/redoc-{importlib.metadata.version('drf-spectacular-sidecar')}.js"


def bundle_response() -> Response[bytes]:
    """Returns the Redoc bundle as JavaScript, cacheable for a year."""
    return Response(
        bundle(), media_type="text/javascript", headers={"Cache-Control": CACHE_CONTROL}
    )


class OfflineRedoc(RedocRenderPlugin):
    """Redoc at `/schema` and `/schema/redoc` with the script served by the service itself, no
    web fonts and no favicon from elsewhere; it also drops Litestar's HTML 404 page under
    `/schema`, so an unknown path there gets the service's problem details as anywhere."""

    def __init__(self, schema_path: str) -> None:
        self._script = f"{schema_path.rstrip('/')}{bundle_url_path()}"
        super().__init__(
            path=["/", "/redoc"],
            js_url=self._script,
            google_fonts=False,
            favicon=NO_FAVICON,
            style=STYLE,
        )

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        """Returns Litestar's Redoc page with the policy as the first element of its head."""
        page = super().render(request, openapi_schema)
        policy = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        return page.replace(b"<head>", b"<head>" + policy.encode(), 1)

    def receive_router(self, router: Router) -> None:
        """Adds the bundle's route to the schema router and removes its HTML 404 route."""
        router.routes = [route for route in router.routes if not _html_not_found(route)]
        router.register(
            get(bundle_url_path(), include_in_schema=False, sync_to_thread=False)(bundle_response)
        )


def _html_not_found(route: Any) -> bool:
    """Returns whether `route` is Litestar's catch-all HTML 404 page of the schema router."""
    page: object = handle_schema_path_not_found
    return isinstance(route, HTTPRoute) and any(
        handler.fn is page for handler in route.route_handlers
    )


def render_plugins(schema_path: str) -> list[OpenAPIRenderPlugin]:
    """Returns the schema router's pages: Redoc (offline) and the YAML document (the JSON
    document Litestar adds itself)."""
    return [OfflineRedoc(schema_path), YamlRenderPlugin()]
