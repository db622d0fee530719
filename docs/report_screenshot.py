"""Make docs/report.png, the tutorial's picture of `tagger report`, from the code: tag the shipped
examples with this tree's tagger and its defaults (`tagger tag examples/*.txt examples/*.jsonl`),
write their report, open it in headless Chromium with the Reinforcement learning area selected,
and take the screenshot. Run from the repository root, with `.[test]` and Chromium installed (the
test suite's requirements):

    python docs/report_screenshot.py

`--tagged FILE` takes the picture of FILE (tagged output) instead of tagging the examples; `-o`
writes it elsewhere. The settings are fixed (a 1,280 x 1,400 viewport, scale 1, en-US, UTC, sRGB,
no scrollbars, no font hinting or subpixel text), so the same tree and Chromium give the same
picture. Chromium is found as the tests find it: $TAGGER_CHROMIUM, else `chromium` or
`chromium-browser` on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TITLE = "tagger report: the shipped examples"
VIEWPORT = {"width": 1280, "height": 1400}
AREA = "rl"  # selected in the picture
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # the same pixels every time
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
    "--disable-lcd-text",
]


STABLE_TRIES = 10  # pictures taken at most, waiting for two the same
SETTLED = """() => document.fonts.ready.then(() => new Promise(done =>
    requestAnimationFrame(() => requestAnimationFrame(done))))"""


def chromium() -> str:
    path = (
        os.environ.get("TAGGER_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not path:
        sys.exit("Error: no Chromium: `apt-get install chromium`, or set TAGGER_CHROMIUM")
    return path


def tagger(*args: str) -> None:
    """The command line, as the tutorial runs it (this tree's tagger, whatever is installed)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    subprocess.run([sys.executable, "-m", "tagger", *args], check=True, cwd=ROOT, env=env)


def screenshot(page_path: Path, png_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=FLAGS)
        context = browser.new_context(
            viewport=VIEWPORT,
            device_scale_factor=1,
            locale="en-US",
            timezone_id="UTC",
            color_scheme="light",
            reduced_motion="reduce",
        )
        page = context.new_page()
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        page.select_option("#area", AREA)
        page.evaluate("window.scrollTo(0, 0)")
        # the change redraws the papers and scrolls: the picture waits for fonts and two frames
        # painted after it, then, as Playwright's own toHaveScreenshot does, takes pictures until
        # two in a row are the same, so that a loaded machine does not catch the page half drawn
        page.evaluate(SETTLED)
        shots = [page.screenshot(animations="disabled", caret="hide")]
        while len(shots) < STABLE_TRIES and (len(shots) < 2 or shots[-1] != shots[-2]):
            page.evaluate(SETTLED)
            shots.append(page.screenshot(animations="disabled", caret="hide"))
        browser.close()
    if shots[-1] != shots[-2]:
        sys.exit(f"Error: the page did not settle in {STABLE_TRIES} pictures")
    png_path.write_bytes(shots[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tagged", type=Path, help="Tagged output to show (default: the examples)")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "report.png")
    args = parser.parse_args(argv)
    output = args.output.resolve()
    with tempfile.TemporaryDirectory(prefix="tagger-report-") as tmp:
        tagged = args.tagged
        if tagged is None:
            tagged = Path(tmp) / "tagged.jsonl"
            papers = sorted(EXAMPLES.glob("*.txt")) + sorted(EXAMPLES.glob("*.jsonl"))
            tagger("tag", *(str(p.relative_to(ROOT)) for p in papers), "-o", str(tagged))
        page = Path(tmp) / "report.html"
        tagger("report", str(tagged.resolve()), "-o", str(page), "--title", TITLE)
        screenshot(page, output)
    print(f"{args.output}: {VIEWPORT['width']} x {VIEWPORT['height']}", file=sys.stderr)


if __name__ == "__main__":
    main()
