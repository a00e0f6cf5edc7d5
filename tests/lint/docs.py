#!/usr/bin/python3
"""What the user reads speaks of what the tool does, in lines a terminal shows whole.

usage: docs.py REPO RINGSCALE RINGSCALE_STATS

Checks, each printing its count and every offending place:
- every Markdown file the repository tracks: no line over 100 columns outside fenced code
  blocks and table rows;
- the same files, the `--help` output of `ringscale`, `ringscale-stats` and each subcommand
  listed in analysis/commands/commands.inc, and the string literals of the product's C/C++/CUDA
  sources (src, comm, kernels, jobs, analysis; adjacent literals joined): no reference to the
  project's own issues ("issue 49", "issues 22 and 35", "(#49)" or "see #49" in Markdown prose) and no words
  of its process ("the issue's minimum", "Done when", "coordinator");
- every relative link of those Markdown files names a file that exists and, after "#", a heading
  of that file (GitHub's anchors);
- tests/bench/README.md's results table has a row for every script in tests/bench/.
Exit 1 when any check finds something, 2 on bad usage.
"""
import os
import re
import subprocess
import sys

MAX_COLUMNS = 100
# References to the project's own issues and words of its process, in any text the user reads.
PROCESS = [
    (re.compile(r"\bissues?\s*#?\d+", re.I), "an issue number"),
    (re.compile(r"\bissues?\s+(?:\d+\s*(?:,|and|or)\s*)+\d+", re.I), "issue numbers"),
    (re.compile(r"\bissue's\b", re.I), "the issue's"),
    (re.compile(r"\b(?:this|the|that|our) issue\b", re.I), "the issue"),
    (re.compile(r"\bDone when\b", re.I), "Done when"),
    (re.compile(r"\bcoordinator\b", re.I), "coordinator"),
    (re.compile(r"\bclosing note\b", re.I), "closing note"),
    (re.compile(r"\bfiled by\b", re.I), "filed by"),
]
# "#49" as a reference in Markdown prose: "(#49)", "#49's", "see #49", "fixes #49", "in #49".
# Code spans, code blocks and link targets are left out, and so are launch numbers, which
# history prints and the docs quote in prose ("a step at #8", "since #8").
HASH_NUMBER = re.compile(r"\(#\d+\)|(?<![\w&#/])#\d+'s\b|\b(?:see|fixes|fixed|closes|closed|"
                         r"resolves|in|per|PR|pull request)\s+#\d+\b", re.I)
CODE_SPAN = re.compile(r"`[^`]*`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def process_words(text):
    """The process words found in text, as short names."""
    return [name for pattern, name in PROCESS if pattern.search(text)]


def tracked(repo, *patterns):
    out = subprocess.run(["git", "-C", repo, "ls-files", "--", *patterns], capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def markdown_findings(repo, path):
    """(long lines, process findings) of one Markdown file, each 'path:line: what'."""
    long_lines, words = [], []
    in_code = False
    with open(os.path.join(repo, path), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = f"{path}:{number}"
            for name in process_words(line):
                words.append(f"{where}: {name}: {line.strip()[:90]}")
            if FENCE.match(line):
                in_code = not in_code
                continue
            if in_code:
                continue
            prose = LINK_TARGET.sub("]()", CODE_SPAN.sub("``", line))
            if HASH_NUMBER.search(prose):
                words.append(f"{where}: a #number: {line.strip()[:90]}")
            if len(line) > MAX_COLUMNS and not line.lstrip().startswith("|"):
                long_lines.append(f"{where}: {len(line)} columns")
    return long_lines, words


def help_texts(repo, ringscale, stats):
    """(name, text) of every --help the programs print."""
    inc = open(os.path.join(repo, "analysis/commands/commands.inc"), encoding="utf-8").read()
    commands = re.findall(r"^RINGSCALE_STATS_COMMAND\((\w+)\)", inc, re.M)
    if not commands:
        raise SystemExit("docs.py: no RINGSCALE_STATS_COMMAND line in commands.inc")
    calls = [[ringscale, "--help"], [stats, "--help"]] + [[stats, c, "--help"] for c in commands]
    texts = []
    for call in calls:
        run = subprocess.run(call, capture_output=True, text=True, errors="replace")
        name = " ".join([os.path.basename(call[0])] + call[1:])
        if run.returncode != 0 or len(run.stdout) < 100:
            raise SystemExit(f"docs.py: `{name}` exited {run.returncode} with "
                             f"{len(run.stdout)} characters of output")
        texts.append((name, run.stdout + run.stderr))
    return texts


def string_literals(source):
    """(line, text) of each run of adjacent string literals of a C/C++/CUDA source, comments
    and character literals left out; escapes are kept as written."""
    out, i, line, n = [], 0, 1, len(source)
    group, group_line, last_end = [], 0, -1
    while i < n:
        c = source[i]
        if c == "\n":
            line += 1
            i += 1
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
        elif c == "'" and not (i > 0 and (source[i - 1].isalnum())):
            j = i + 1
            while j < n and source[j] != "'" and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            i = j + 1
        elif c == '"':
            raw = i > 0 and source[i - 1] == "R"
            if raw:
                open_paren = source.find("(", i)
                delim = ")" + source[i + 1:open_paren] + '"'
                end = source.find(delim, open_paren)
                end = n if end < 0 else end + len(delim)
                text = source[open_paren + 1:end - len(delim)]
            else:
                j = i + 1
                while j < n and source[j] != '"' and source[j] != "\n":
                    j += 2 if source[j] == "\\" else 1
                end = j + 1
                text = source[i + 1:j]
            between = source[last_end:i] if last_end >= 0 else "x"
            if group and between.strip() == "":
                group.append(text)
            else:
                if group:
                    out.append((group_line, "".join(group)))
                group, group_line = [text], line
            line += source.count("\n", i, end)
            last_end = i = end
        else:
            i += 1
    if group:
        out.append((group_line, "".join(group)))
    return out


def heading_anchors(path):
    """GitHub's anchors of a Markdown file's headings (code blocks left out)."""
    anchors, seen, in_code = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            in_code = not in_code
        m = None if in_code else re.match(r"^#{1,6}\s+(.*)", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def broken_links(repo, path):
    """'path:line: target' for each relative link whose file or heading does not exist."""
    out, in_code = [], False
    for number, line in enumerate(open(os.path.join(repo, path), encoding="utf-8"), 1):
        if FENCE.match(line):
            in_code = not in_code
        if in_code:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(repo, os.path.dirname(path), file)) if file \
                else os.path.join(repo, path)
            if not os.path.exists(full):
                out.append(f"{path}:{number}: no file {target}")
            elif anchor and full.endswith(".md") and anchor not in heading_anchors(full):
                out.append(f"{path}:{number}: no heading {target}")
    return out


def bench_scripts_without_row(repo):
    """Scripts of tests/bench without a row naming them (`name.sh` in a table's first cell)."""
    named = set()
    for line in open(os.path.join(repo, "tests/bench/README.md"), encoding="utf-8"):
        if line.lstrip().startswith("|"):
            named.update(re.findall(r"`([\w.-]+\.sh)`", line.strip().strip("|").split("|")[0]))
    scripts = [os.path.basename(p) for p in tracked(repo, "tests/bench/*.sh")]
    return scripts, sorted(set(scripts) - named)


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    repo, ringscale, stats = sys.argv[1:]
    long_lines, words = [], []
    markdown = tracked(repo, "*.md")
    links = []
    for path in markdown:
        found = markdown_findings(repo, path)
        long_lines += found[0]
        words += found[1]
        links += broken_links(repo, path)
    helps = help_texts(repo, ringscale, stats)
    for name, text in helps:
        # Help is wrapped to the terminal: "issue" and "49" may sit on two lines.
        flat = " ".join(text.split())
        for pattern, word in PROCESS:
            for m in pattern.finditer(flat):
                words.append(f"`{name}`: {word}: ...{flat[max(0, m.start() - 40):m.end() + 40]}...")
    sources = tracked(repo, "src", "comm", "kernels", "jobs", "analysis")
    sources = [p for p in sources if re.search(r"\.(c|h|cpp|hpp|cu|cuh|inc)$", p)]
    literals = 0
    for path in sources:
        with open(os.path.join(repo, path), encoding="utf-8", errors="replace") as f:
            for number, text in string_literals(f.read()):
                literals += 1
                for word in process_words(text):
                    words.append(f"{path}:{number}: {word} in a message: {text[:90]}")
    print(f"{len(markdown)} Markdown files, {len(helps)} --help texts, {literals} string "
          f"literals of {len(sources)} sources")
    print(f"Markdown lines over {MAX_COLUMNS} columns outside tables and code blocks: "
          f"{len(long_lines)}")
    for finding in long_lines:
        print("  " + finding)
    print(f"issue numbers and process words: {len(words)}")
    for finding in words:
        print("  " + finding)
    print(f"relative links to a file or heading that does not exist: {len(links)}")
    for finding in links:
        print("  " + finding)
    scripts, missing = bench_scripts_without_row(repo)
    print(f"scripts of tests/bench without a row in tests/bench/README.md: {len(missing)} of "
          f"{len(scripts)}")
    for name in missing:
        print("  " + name)
    return 1 if long_lines or words or links or missing or not scripts else 0


if __name__ == "__main__":
    sys.exit(main())
