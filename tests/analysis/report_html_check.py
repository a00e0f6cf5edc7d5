#!/usr/bin/python3
"""Checks report.html in headless Chromium and with tidy; exits 1 naming the first
failure. Debian's python3 only.

usage: report_html_check.py REPORT.html [--section ID]... [--regression TEXT]... [--hover TEXT]
       [--timeline-lanes N]
                            [--hostile TEXT]... [--screenshot OUT.png] [--at ANCHOR]
                            [--row-links ID=N]... [--glance N]

- every inline <svg> parses as XML; tidy reports no error (warnings allowed);
- Chromium loads the page from disk: the page makes no network request (net log: no request the
  page initiated, other than file: and data:), the console shows nothing (errors, CSP refusals),
  and the DOM after the page's script ran holds each --section id, an SVG in every plot figure and
  series, the regressions table with a row holding every --regression text, a point's hover
  <title> holding every --hover text; a study plot's point with every --plot-hover text and,
  with --plot-marked, its marked points in their own g.marked group;
- --row-links ID=N: the table rows of section ID link into the page (href="#X"), every such
  link resolves to an element with id X in the DOM, at least N rows carry one, and each row
  without one says "no series on this page";
- --hostile: no element carries an on* attribute, no <img> or <iframe>, one <script> (the page's),
  no data-pwned attribute (which every hostile payload sets when it runs), and the payloads show
  as text;
- --screenshot: the page's screenshot is not blank;
- --glance N: the first section (At a glance) answers in plain words: N or more scheme answers,
  each starting "S=..., P=..." and holding none of the fields its list says once above it
  ("every line has ..."), "fastest" only on an answer the decision rule confirmed, the regressed series one line
  per cause (no two alike, no environment string such as an MPI version), and the marked
  launches one paragraph with their count, never a list.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--enable-logging=stderr", "--v=0"]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    fail("no chromium on PATH (tests/install-deps.sh --test installs it)")


def run_browser(page, extra, work, fragment=""):
    net = os.path.join(work, "net.json")
    cmd = [chromium()] + FLAGS + [f"--user-data-dir={work}/profile", f"--log-net-log={net}"]
    url = "file://" + os.path.abspath(page) + (f"#{fragment}" if fragment else "")
    r = subprocess.run(cmd + extra + [url], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"chromium exited {r.returncode}: {r.stderr[-600:]}")
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if console:
        fail(f"console messages: {console[:3]}")
    events = json.load(open(net)).get("events", [])
    for e in events:
        p = e.get("params", {})
        url = str(p.get("url", ""))
        if url and "initiator" in p and p["initiator"] != "not an origin" and \
                not url.startswith(("file:", "data:")):
            fail(f"the page requested {url}")
    return r.stdout


def check_svgs(text):
    svgs = re.findall(r"<svg\b.*?</svg>", text, re.S)
    for i, s in enumerate(svgs):
        try:
            ET.fromstring(s)
        except ET.ParseError as e:
            fail(f"inline SVG {i + 1} of {len(svgs)} is not well-formed XML: {e}")
    return len(svgs)


def check_tidy(page):
    if not shutil.which("tidy"):
        fail("no tidy on PATH (tests/install-deps.sh --test installs it)")
    r = subprocess.run(["tidy", "-q", "-e", page], capture_output=True, text=True)
    errors = [l for l in r.stderr.splitlines() if " Error: " in l]
    if r.returncode >= 2 or errors:
        fail(f"tidy: {errors[:5] or r.stderr[-600:]}")


class dom_walk(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.handlers, self.tags, self.figures = set(), [], {}, []
        self.pwned = False
        self.stack = []

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k == "id":
                self.ids.add(v)
            if k.startswith("on"):
                self.handlers.append((tag, k))
            if k == "data-pwned":
                self.pwned = True


def check_screenshot(page, out, work):
    run_browser(page, ["--window-size=1100,760", f"--screenshot={out}"], work)
    data = open(out, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    idat, at = b"", 8
    while at < len(data):
        n = int.from_bytes(data[at:at + 4], "big")
        if data[at + 4:at + 8] == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    raw = zlib.decompress(idat)
    if len(set(raw)) < 32:
        fail(f"the screenshot is blank ({len(set(raw))} distinct bytes)")


def check_plot_points(dom, wants, marked):
    """Hover on the study plots' points (figure.plot, not the history charts) and marked
    points drawn apart: in their own g.marked group (hollow orange, hidden by the toggle)."""
    figures = re.findall(r'<figure class="plot".*?</figure>', dom, re.S)
    titles = [t for f in figures for t in re.findall(r'<g class="hv"><title>(.*?)</title>', f, re.S)]
    for want in wants:
        if not any(want in t for t in titles):
            fail(f"no study plot's point has hover text holding {want!r} "
                 f"({len(titles)} hover texts in {len(figures)} plots)")
    if marked is None:
        return
    groups, clean = [], []
    for f in figures:  # a plot group runs to the next plot group or the end of its SVG
        at = 0
        for m in re.finditer(r'<g class="marked" id="[^"]*gnuplot_plot_\d+[a-z]*"', f):
            rest = f[m.end():]
            end = re.search(r'id="[^"]*gnuplot_plot_\d+[a-z]*"|</svg>', rest)
            groups.append(rest[:end.start() if end else len(rest)])
            clean.append(f[at:m.start()])
            at = m.end() + (end.start() if end else len(rest))
        clean.append(f[at:])
    if not any(re.search(r'<g class="hv"><title>[^<]*' + re.escape(marked), g) for g in groups):
        fail(f"no study plot draws a marked point apart with hover {marked!r} "
             f"({len(groups)} marked groups)")
    for t in re.findall(r'<g class="hv"><title>(.*?)</title>', "".join(clean), re.S):
        if "\nmarked: " in t:
            fail(f"a marked point is drawn among the clean ones: {t[:160]!r}")


def check_row_links(dom, ids, spec):
    """compare's rows: each links to its case's series, which must be in the DOM."""
    section, _, least = spec.partition("=")
    m = re.search(r'<section id="' + re.escape(section) + r'">.*?</section>', dom, re.S)
    if not m:
        fail(f"--row-links: no section {section}")
    rows = re.findall(r"<tbody>.*?</tbody>", m.group(0), re.S)
    rows = [r for body in rows for r in re.findall(r"<tr\b.*?</tr>", body, re.S)]
    linked = 0
    for r in rows:
        targets = re.findall(r'<a href="#([^"]*)"', r)
        for t in targets:
            if t not in ids:
                fail(f"a row of {section} links to #{t}, which no element of the page has")
        if targets:
            linked += 1
        elif "no series on this page" not in r:
            fail(f"a row of {section} links nowhere and does not say so: {r[:200]}")
    if linked < int(least or 1):
        fail(f"{linked} of {len(rows)} rows of {section} link to their series, want {least}")


def text_of(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def check_glance(dom, least_answers):
    """The At a glance section's answers (see the module's doc, --glance)."""
    m = re.search(r'<section id="at-a-glance">(.*?)</section>', dom, re.S)
    if not m:
        fail("no At a glance section")
    blocks = re.findall(r"<p>(.*?)</p>\s*<ul>(.*?)</ul>", m.group(1), re.S)
    answers = 0
    for intro, items in blocks:
        intro, items = text_of(intro), [text_of(i) for i in re.findall(r"<li>(.*?)</li>", items,
                                                                            re.S)]
        common = re.search(r"every line has (.*):$", intro)
        for item in items:
            if item.startswith("... and "):
                continue
            for word in (common.group(1).split() if common else []):
                if word in {w.strip("(),:") for w in item.split()}:
                    fail(f"an answer repeats the common field {word!r}: {item!r}")
            if intro.startswith("Schemes per (S, P)"):
                answers += 1
                if not re.match(r"S=[^,]+, P=\d+", item):
                    fail(f"a scheme answer does not open with S and P: {item!r}")
                if "fastest" in item and not item.endswith(": confirmed"):
                    fail(f"'fastest' on an answer the rule did not decide: {item!r}")
            if intro.startswith("History:"):
                if not re.match(r"\d+ series slower since ", item) or " | " in item:
                    fail(f"a history line is not one cause: {item!r}")
        if intro.startswith("Marked"):
            fail(f"marked launches listed one by one on the first screen: {items[:3]}")
        causes = [re.sub(r"^\d+ series ", "", i) for i in items if intro.startswith("History:")]
        if len(causes) != len(set(causes)):
            fail(f"the same cause on two history lines: {causes}")
    if answers < least_answers:
        fail(f"{answers} scheme answers in At a glance, fewer than {least_answers}")
    paragraphs = [text_of(p) for p in re.findall(r"<p>(.*?)</p>", m.group(1), re.S)]
    marked = [p for p in paragraphs if p.startswith(("Marked (", "Nothing was marked"))]
    if len(marked) != 1:
        fail(f"the marked launches are not one line: {marked}")
    return answers


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("page")
    ap.add_argument("--section", action="append", default=[])
    ap.add_argument("--regression", action="append", default=[])
    ap.add_argument("--hover", action="append", default=[])
    ap.add_argument("--plot-hover", action="append", default=[],
                    help="a study plot's (not history's) point has hover text holding it")
    ap.add_argument("--plot-marked", metavar="TEXT",
                    help="a study plot draws marked points apart: a g.marked group whose "
                         "points' hover holds TEXT")
    ap.add_argument("--row-links", action="append", default=[], metavar="ID=N",
                    help="N or more rows of section ID's tables link to an element of the page")
    ap.add_argument("--timeline-lanes", type=int, default=0, metavar="N",
                    help="a timeline SVG (--trace) with N or more lanes, its events' hover "
                         "text naming their ring step")
    ap.add_argument("--hostile", action="append", default=[])
    ap.add_argument("--screenshot")
    ap.add_argument("--at", default="", help="open the page at this anchor")
    ap.add_argument("--glance", type=int, metavar="N",
                    help="At a glance answers in plain words, N or more scheme answers (see the "
                         "module's doc)")
    a = ap.parse_args()
    text = open(a.page, encoding="utf-8").read()
    n_svg = check_svgs(text)
    check_tidy(a.page)
    work = tempfile.mkdtemp(prefix="ringscale_html_")
    try:
        # Opened at --at (an anchor), with time for the page's script to draw what is in view.
        dom = run_browser(a.page, ["--dump-dom", "--virtual-time-budget=3000"], work, a.at)
        walk = dom_walk()
        walk.feed(dom)
        for s in a.section:
            if s not in walk.ids:
                fail(f"no element with id {s}")
        plots = len(re.findall(r'<figure class="plot"', dom)) + len(
            re.findall(r'<details class="series"', dom))
        if n_svg < plots or n_svg == 0:
            fail(f"{plots} plots and series but {n_svg} inline SVGs")
        for fig in re.findall(r'<figure class="plot".*?</figure>', dom, re.S):
            if "<svg" not in fig:
                fail(f"a plot figure without an SVG: {fig[:120]}")
        table = re.search(r'<table class="sortable regressions">.*?</table>', dom, re.S)
        for want in a.regression:
            rows = re.findall(r"<tr\b.*?</tr>", table.group(0) if table else "", re.S)
            if not any(all(w in r for w in want.split("&&")) for r in rows):
                fail(f"no regressions row holds {want!r}")
        # The history charts are drawn by the page's script as they near the view: the first
        # ones must be in place after the load.
        if a.hover and '<div class="plot"><svg' not in dom:
            fail("no history chart was drawn from its template after the load")
        titles = re.findall(r'<g class="hv"><title>(.*?)</title>', dom, re.S)
        for want in a.hover:
            if not any(want in t for t in titles):
                fail(f"no hover text holds {want!r} ({len(titles)} hover texts)")
        check_plot_points(dom, a.plot_hover, a.plot_marked)
        if a.glance is not None:
            check_glance(dom, a.glance)
        if a.timeline_lanes:
            svgs = re.findall(r'<svg[^>]*class="timeline".*?</svg>', dom, re.S)
            if not svgs:
                fail("no timeline SVG")
            lanes = max(len(re.findall(r'<g class="lane"', t)) for t in svgs)
            if lanes < a.timeline_lanes:
                fail(f"a timeline with {lanes} lanes, {a.timeline_lanes} wanted")
            hovers = re.findall(r'<rect[^>]*><title>([^<]*ring step[^<]*)</title></rect>',
                                "".join(svgs))
            if not hovers:
                fail("no timeline event has hover text naming its ring step")
        for spec in a.row_links:
            check_row_links(dom, walk.ids, spec)
        if a.hostile:
            if walk.pwned:
                fail("a hostile payload ran (data-pwned set)")
            if walk.handlers:
                fail(f"event handler attributes in the page: {walk.handlers[:3]}")
            if walk.tags.get("script", 0) != 1 or walk.tags.get("img") or \
                    walk.tags.get("iframe"):
                fail(f"hostile markup became elements: {walk.tags}")
            for h in a.hostile:
                if html.escape(h, quote=False) not in dom:
                    fail(f"the hostile text {h!r} is not shown as text")
        if a.screenshot:
            check_screenshot(a.page, a.screenshot, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"report_html_check: {a.page}: {n_svg} inline SVGs, {len(walk.ids)} anchors, "
          f"{len(titles)} hover texts: ok")


main()
