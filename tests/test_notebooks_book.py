"""The offline HTML book, tested in a real browser (headless Chromium driven by Playwright).

The test builds the book as ``make book`` does (``tools/build_book.py``), from the quick-scale runs that
``tests/test_notebooks.py`` has just written (this file sorts after it; missing runs are executed first), into
``build/book-test``. It then opens every page from file:// and asserts that:

* MathJax rendered the math: ``mjx-container`` elements are present and no raw ``$$`` is left in the text;
* every image loaded (``complete`` with a natural width);
* no request left the machine (every URL is file:, data: or blob:).

It saves screenshots of the landing page, a notebook page's opening and its first figure under ``build/``. It
is skipped, with a message, when Chromium is not installed (Debian: ``apt-get install chromium``; ``.ci/run``
installs it).
"""

import shutil
from pathlib import Path

import pytest

from tools import build_book

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def _build_book() -> Path:
    return build_book.build(out=ROOT / "build" / "book-test", quick_only=True)


@pytest.mark.timeout(600)
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt-get install chromium)")
@pytest.mark.skipif(
    shutil.which("npm") is None and not (ROOT / "build" / "vendor" / "mathjax-3.2.2.tgz").exists(),
    reason="npm is not installed, so MathJax cannot be vendored (Debian: apt-get install npm)",
)
def test_book_pages_render_math_and_images_with_no_external_request():
    from playwright.sync_api import sync_playwright

    html = _build_book()
    pages = sorted(p.name for p in html.glob("*.html") if p.name not in ("genindex.html", "search.html"))
    assert "index.html" in pages and len(pages) >= 3, pages
    external, problems = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda r: None if r.url.startswith(LOCAL_SCHEMES) else external.append(r.url))
        for name in pages:
            page.goto((html / name).as_uri(), wait_until="load")
            if page.evaluate("() => !!document.querySelector('script[src*=\"mathjax\"]')"):
                page.wait_for_function(
                    "() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=30_000
                )
                page.evaluate("() => MathJax.startup.promise")
            state = page.evaluate(
                """() => ({
                    math: document.querySelectorAll('mjx-container').length,
                    rawDisplayMath: (document.querySelector('main') || document.body).innerText.includes('$$'),
                    images: Array.from(document.images).map(i => [i.currentSrc, i.complete && i.naturalWidth > 0]),
                })"""
            )
            broken = [src for src, ok in state["images"] if not ok]
            if broken:
                problems.append(f"{name}: images did not load: {broken[:3]}")
            if state["rawDisplayMath"]:
                problems.append(f"{name}: raw $$ left in the text (MathJax did not typeset it)")
            if name[:2].isdigit() and not state["images"]:
                problems.append(f"{name}: a notebook page without a single figure")
            if name.startswith("0") and state["math"] == 0:
                problems.append(f"{name}: no MathJax output (mjx-container) on a notebook page with math")
        page.goto((html / "index.html").as_uri(), wait_until="load")
        page.screenshot(path=str(ROOT / "build" / "book-screenshot-index.png"), full_page=True)
        page.goto((html / "09_softmax_vs_linear_separation.html").as_uri(), wait_until="load")
        page.evaluate("() => MathJax.startup.promise")
        page.screenshot(path=str(ROOT / "build" / "book-screenshot.png"))
        page.locator("img").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ROOT / "build" / "book-screenshot-figure.png"))
        browser.close()
    assert not external, f"the book made external requests: {sorted(set(external))[:5]}"
    assert not problems, "\n".join(problems)
