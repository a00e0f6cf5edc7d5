"""The README's quick starts, as the tests run them.

A quick start in README.md is a pair of fenced code blocks, each after a marker line:
  <!-- quickstart NAME: commands -->   the commands, run as written
  <!-- quickstart NAME: output -->     what the README says they print

  readme.py commands README NAME          print NAME's commands
  readme.py check README NAME OUTPUT      check OUTPUT (what the commands printed) against
                                          NAME's output block; exit 1 naming each line missing

A line of the output block is found when some line of OUTPUT matches it, in any order: runs of
whitespace are one space; a number (with its unit: ns, us, ms, s, B, KiB, MiB, GiB, TiB) stands
for any number, since measured values differ from run to run; a word `…` stands for any columns,
`…` inside a word for any text in it; the output's line may go on past the end of the README's.
A line of three dots alone stands for output the README leaves out.
"""
import re
import sys

NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
UNIT = r"(?:ns|us|ms|s|min|B|KiB|MiB|GiB|TiB)"


def block(readme, name, kind):
    """The text of the fenced block after `<!-- quickstart NAME: KIND -->`."""
    marker = f"<!-- quickstart {name}: {kind} -->"
    lines = readme.split("\n")
    if marker not in lines:
        raise SystemExit(f"readme.py: README has no line '{marker}'")
    rest = lines[lines.index(marker) + 1 :]
    if not rest or not rest[0].startswith("```"):
        raise SystemExit(f"readme.py: '{marker}' is not followed by a code block")
    end = rest.index("```", 1)
    return "\n".join(rest[1:end]) + "\n"


def word_pattern(word, after_number):
    """A regex for one whitespace-separated word of an expected line."""
    unit = re.fullmatch(UNIT + r"([,\])]*)", word)
    if after_number and unit:
        return UNIT + re.escape(unit.group(1))
    parts = re.split(f"({NUMBER}|…)", word)
    return "".join(
        NUMBER if re.fullmatch(NUMBER, p) else r"\S*" if p == "…" else re.escape(p)
        for p in parts
        if p
    )


def line_pattern(line):
    """The regex an output line must match from its start for `line` to be found."""
    regex, after_number = "", False
    for k, word in enumerate(line.split()):
        if word == "…":
            regex += r"(?:\s.*)?"
            after_number = False
            continue
        if k > 0:
            regex += r"\s+" if not regex.endswith(r"(?:\s.*)?") else r"\s*"
        regex += word_pattern(word, after_number)
        after_number = re.search(NUMBER + r"$", word) is not None
    return re.compile(regex)


def check(readme, name, output):
    """Lines of NAME's output block that no line of `output` matches."""
    got = [" ".join(line.split()) for line in output.split("\n")]
    missing = []
    for line in block(readme, name, "output").split("\n"):
        if not line.strip() or line.strip() == "...":
            continue
        pattern = line_pattern(line)
        if not any(pattern.match(g) for g in got):
            missing.append(line)
    return missing


def main(argv):
    if len(argv) == 3 and argv[0] == "commands":
        with open(argv[1], encoding="utf-8") as f:
            sys.stdout.write(block(f.read(), argv[2], "commands"))
        return 0
    if len(argv) == 4 and argv[0] == "check":
        with open(argv[1], encoding="utf-8") as f:
            readme = f.read()
        with open(argv[3], encoding="utf-8", errors="replace") as f:
            missing = check(readme, argv[2], f.read())
        for line in missing:
            print(f"readme.py: quickstart {argv[2]}: the README shows a line the output lacks:\n  {line}")
        if not missing:
            print(f"readme.py: quickstart {argv[2]}: every line the README shows was printed")
        return 1 if missing else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
