#!/usr/bin/python3
"""The results schema's reference against the names the schema code declares.

usage: schema_reference.py REPO

Declared: the string value of every `inline constexpr const char* NAME = "value";` in
src/base/results_schema.hpp, machine_schema.hpp and numerics_schema.hpp (the values of namespace
`status` and the schema version strings are values, not fields), and the strings of the
numerics_datasets() list; a value ending in "_" or "." is a prefix family, written `acc_*`. The
trace group's columns: the lists of column_names() and kept_column_names() in
src/base/trace_events.cpp and the columns src/base/stored_trace.cpp reads by name.
Documented: the backticked names in the first column of src/base/RESULTS_SCHEMA.md's tables.
Exit 1 naming each declared field missing from the reference and each documented one the code
does not declare; 2 when either side is empty (a parse that found nothing proves nothing).
"""
import os
import re
import sys

HEADERS = ["src/base/results_schema.hpp", "src/base/machine_schema.hpp",
           "src/base/numerics_schema.hpp"]
REFERENCE = "src/base/RESULTS_SCHEMA.md"
TRACE_COLUMNS = "src/base/trace_events.cpp"
TRACE_READER = "src/base/stored_trace.cpp"
DECLARATION = re.compile(r'inline\s+constexpr\s+const\s+char\s*\*\s*(\w+)\s*=\s*"([^"]*)"\s*;')


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def declared_fields(repo):
    fields = set()
    for header in HEADERS:
        text = strip_comments(open(os.path.join(repo, header), encoding="utf-8").read())
        # Values of attr::status are what a field holds, not fields.
        text = re.sub(r"namespace\s+status\s*\{.*?\}", "", text, flags=re.S)
        for _, value in DECLARATION.findall(text):
            if "/" in value:  # the schema versions, "ringscale/2"
                continue
            fields.add(value + "*" if value.endswith(("_", ".")) else value)
        listed = re.search(r"numerics_datasets\(\)\s*\{.*?\{(.*?)\};", text, flags=re.S)
        if listed:
            fields.update(re.findall(r'"([^"]+)"', listed.group(1)))
    fields.update(trace_fields(repo))
    return fields


def trace_fields(repo):
    text = strip_comments(open(os.path.join(repo, TRACE_COLUMNS), encoding="utf-8").read())
    fields = set()
    for fn in ("column_names", "kept_column_names"):
        listed = re.search(fn + r"\(\)\s*\{.*?\{(.*?)\};", text, flags=re.S)
        if listed:
            fields.update(re.findall(r'"([^"]+)"', listed.group(1)))
    text = strip_comments(open(os.path.join(repo, TRACE_READER), encoding="utf-8").read())
    fields.update(re.findall(r'read_column\(\s*\w+\s*,\s*"(\w+)"', text))
    return fields


def documented_fields(repo):
    names, in_code = set(), False
    for line in open(os.path.join(repo, REFERENCE), encoding="utf-8"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        if in_code or not line.lstrip().startswith("|"):
            continue
        cells = line.strip().strip("|").split("|")
        if cells and not re.fullmatch(r"\s*-+\s*", cells[0]):
            names.update(re.findall(r"`([^`]+)`", cells[0]))
    return names


def main():
    if len(sys.argv) != 2:
        print("usage: schema_reference.py REPO", file=sys.stderr)
        return 2
    repo = sys.argv[1]
    declared, documented = declared_fields(repo), documented_fields(repo)
    print(f"{len(declared)} fields declared in {' and '.join(HEADERS)}; "
          f"{len(documented)} named in {REFERENCE}")
    if len(declared) < 50 or not documented:
        print("schema_reference.py: too few names parsed; the headers' form changed?")
        return 2
    missing = sorted(declared - documented)
    unknown = sorted(documented - declared)
    for name in missing:
        print(f"  declared but not in {REFERENCE}: {name}")
    for name in unknown:
        print(f"  in {REFERENCE} but declared nowhere: {name}")
    return 1 if missing or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
