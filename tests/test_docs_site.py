"""The documentation site builds, and every internal link of the built site resolves to a file.

The site is built with `use_directory_urls: false`, so a reader who opens ``site/index.html``
from disk (no server) follows the same links a server would serve.  The checker below reads
every ``href``/``src`` of every built page with :mod:`html.parser` and fails on a link to a
missing file, to a folder (a browser shows a folder listing, not a page, from disk), or to an
anchor the target page does not define.  Needs the ``docs`` extra (skipped without mkdocs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK_ATTRS = {"a": "href", "link": "href", "img": "src", "script": "src"}


class _Page(HTMLParser):
    """The links (``href``/``src``) and anchors (``id``, ``<a name>``) of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("name"):
            self.ids.add(str(found["name"]))
        wanted = LINK_ATTRS.get(tag)
        if wanted and found.get(wanted):
            self.links.append(str(found[wanted]))


def _parse(page: Path) -> _Page:
    parsed = _Page()
    parsed.feed(page.read_text(encoding="utf-8"))
    return parsed


def broken_links(site: Path) -> list[str]:
    """Every internal link of the built ``site`` that does not lead to a file (and anchor)."""
    pages = {p: _parse(p) for p in sorted(site.rglob("*.html"))}
    problems: list[str] = []
    for page, parsed in pages.items():
        if page == site / "404.html":
            continue  # only a server shows it, for any path: its links are site-absolute
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("//"):
                continue  # external (http, mailto, ...)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            where = f"{page.relative_to(site)} -> {link}"
            if not target.is_file():
                problems.append(f"{where}: {'a folder' if target.is_dir() else 'no such file'}")
            elif parts.fragment and target in pages and parts.fragment not in pages[target].ids:
                problems.append(f"{where}: no anchor #{parts.fragment}")
    return problems


def test_checker_finds_a_broken_link(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.html").write_text('<h1 id="top">b</h1>')
    (tmp_path / "a.html").write_text(
        '<a href="b.html#top">ok</a><a href="https://x.invalid/">ext</a><a href="#here">'
        '</a><p id="here"></p><a href="c.html">missing</a><a href="sub/">folder</a>'
        '<a href="b.html#nope">anchor</a>')
    assert broken_links(tmp_path) == ["a.html -> c.html: no such file",
                                      "a.html -> sub/: a folder",
                                      "a.html -> b.html#nope: no anchor #nope"]


@pytest.fixture(scope="module")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-d", str(site)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    return site


def test_site_builds_with_file_links(built_site: Path) -> None:
    assert (built_site / "index.html").is_file()
    assert (built_site / "guide" / "getting-started.html").is_file()


def test_every_internal_link_resolves(built_site: Path) -> None:
    problems = broken_links(built_site)
    assert not problems, f"{len(problems)} broken links:\n" + "\n".join(problems[:40])
