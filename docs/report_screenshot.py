"""Take docs/report.png: `tagger report` on the shipped examples, opened in headless Chromium
with the Reinforcement learning area selected. Run from the repository root (with `.[test]` and
chromium installed):

    tagger tag examples/*.txt examples/*.jsonl -o /tmp/tagged.jsonl
    tagger report /tmp/tagged.jsonl -o /tmp/report.html \
        --title "tagger report: the shipped examples"
    python docs/report_screenshot.py /tmp/report.html docs/report.png
"""

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

page_path, png_path = Path(sys.argv[1]).resolve(), sys.argv[2]
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=FLAGS)
    page = browser.new_page(viewport={"width": 1440, "height": 1100})
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-ready=true]")
    page.select_option("#area", "rl")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=png_path)
    browser.close()
