#!/usr/bin/env python3
"""Checks that the reference documentation stays reference (docs/notebook/README.md):

- each budgeted page in docs/ within its line budget, and every docs/*.md page one document
  (one H1 heading outside code blocks);
- no Markdown link in docs/, README.md or CHANGELOG.md that leaves the repository, none that
  names a missing file, and no mention of the session machine's ../shared/measurements/;
- CHANGELOG.md one line per entry (no entry continued on an indented line).

Prints one line per finding and exits 1, or prints nothing and exits 0. CTest runs it
(docs.reference); `--self-test` runs its own cases. Usage: check-docs.py [repository root].
"""
import os
import re
import sys
import tempfile

# Lines at most, per page. Other pages have no budget (README, api ... say what they must).
BUDGETS = {
    "docs/performance.md": 300,
    "docs/gpu.md": 400,
    "docs/scheduling.md": 400,
    "docs/reliability.md": 400,
    "docs/simulation.md": 400,
    "docs/api.md": 900,
}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def outside_code(lines):
    """(number, line) of every line outside ``` blocks."""
    fenced = False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return "".join(c for c in text if c.isalnum() or c in " -").replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return {slug(l.lstrip("#")) for _, l in outside_code(lines) if re.match(r"#+ ", l)}


def check_page(root, rel, findings):
    path = os.path.join(root, rel)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    budget = BUDGETS.get(rel)
    if budget is not None and len(lines) > budget:
        findings.append(f"{rel}: {len(lines)} lines, over its budget of {budget}: move dated "
                        "sessions, tries and superseded figures to docs/notebook/")
    h1 = [n for n, l in outside_code(lines) if re.match(r"# \S", l)]
    if rel.startswith("docs/") and len(h1) > 1:
        findings.append(f"{rel}: {len(h1)} top-level headings (lines "
                        f"{', '.join(map(str, h1))}): one page, one document")
    real_root = os.path.realpath(root)
    for n, line in outside_code(lines):
        if "shared/measurements" in line:
            findings.append(f"{rel}:{n}: names ../shared/measurements/, outside the repository: "
                            "cite the figures from docs/notebook/")
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor of this page
            file_part = target.split("#")[0]
            resolved = os.path.realpath(os.path.join(os.path.dirname(path), file_part))
            if not (resolved + os.sep).startswith(real_root + os.sep) and resolved != real_root:
                findings.append(f"{rel}:{n}: the link {target} leaves the repository")
            elif not os.path.exists(resolved):
                findings.append(f"{rel}:{n}: the link {target} names a missing file")
            elif "#" in target and resolved.endswith(".md") and \
                    target.split("#", 1)[1] not in anchors(resolved):
                findings.append(f"{rel}:{n}: the link {target} names no heading of its page")
        for anchor in re.findall(r"\]\(#([^)\s]+)\)", line):
            if anchor not in anchors(path):
                findings.append(f"{rel}:{n}: the link #{anchor} names no heading of this page")


def check_changelog(root, findings):
    path = os.path.join(root, "CHANGELOG.md")
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if n > 1 and line.startswith("  ") and lines[n - 2].strip() and not line.startswith("   "):
            findings.append(f"CHANGELOG.md:{n}: an entry continued on a second line: one line "
                            "per change (its detail in docs/notebook/ or the commit)")


def check(root):
    findings = []
    pages = ["README.md", "CHANGELOG.md"]
    for folder, _, files in os.walk(os.path.join(root, "docs")):
        pages += [os.path.relpath(os.path.join(folder, f), root) for f in files if f.endswith(".md")]
    for rel in sorted(pages):
        if os.path.exists(os.path.join(root, rel)):
            check_page(root, rel, findings)
    check_changelog(root, findings)
    return findings


def self_test():
    cases = [
        ({"docs/performance.md": "# P\n" + "x\n" * 300}, ["over its budget"]),
        ({"docs/performance.md": "# P\n" + "x\n" * 299}, []),
        ({"docs/a.md": "# A\n\n# B\n"}, ["top-level headings"]),
        ({"docs/a.md": "# A\n```\n# not a heading\n```\n"}, []),
        ({"docs/a.md": "# A\nsee [m](../../shared/x.md)\n"}, ["leaves the repository"]),
        ({"docs/a.md": "# A\nsee [m](b.md) and [w](https://x.org/a.md)\n"}, ["missing file"]),
        ({"docs/a.md": "# A\nfigures in ../shared/measurements/h.md\n"}, ["shared/measurements"]),
        ({"docs/a.md": "# A\n## The B: c\n[x](#the-b-c) [y](b.md#d-e)\n", "docs/b.md": "# B\n## D `e`\n"},
         []),
        ({"docs/a.md": "# A\n[x](#nothing)\n"}, ["no heading of this page"]),
        ({"docs/a.md": "# A\n[y](b.md#nothing)\n", "docs/b.md": "# B\n"}, ["no heading of its page"]),
        ({"CHANGELOG.md": "# C\n\n- one\n- two,\n  continued\n"}, ["second line"]),
        ({"CHANGELOG.md": "# C\n\n- one\n- two\n", "docs/a.md": "# A\n[c](../CHANGELOG.md)\n"},
         []),
    ]
    failed = 0
    for files, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            found = check(root)
            ok = len(found) == len(expected) and all(e in f for e, f in zip(expected, found))
            if not ok:
                failed += 1
                print(f"self-test: {sorted(files)} expected {expected}, found {found}")
    return 1 if failed else 0


def main():
    if "--self-test" in sys.argv[1:]:
        return self_test()
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    findings = check(root)
    for f in findings:
        print(f)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
