#!/usr/bin/env python3
"""Fails on a function longer than a reader can hold: prints file:line, name and length of every
function body longer than its folder's limit (signature to closing brace; FOLDERS) in the
library's folders and exits 1, or prints nothing and exits 0. CTest runs it (function_length); see docs/architecture.md.

A function is found by its braces, after comments, strings and preprocessor lines are blanked:
a `{` whose statement ends in a parameter list (with qualifiers, a trailing return type or a
constructor's initialisers after it) opens a body; lambdas and local classes inside a body
count towards it. Good enough for this code base's style, not a C++ parser."""
import pathlib
import re
import sys

LIMIT = 150
# The runtime's own rooms, where the plan is made and executed, are held to less.
FOLDERS = {"core": 120, "tasks": 120, "partition": 120, "trace": LIMIT, "perfmodels": LIMIT,
           "kernels": LIMIT}
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh"}

# Functions over the limit in rooms being reworked elsewhere, each with its reason. Remove an
# entry when its function is split; an entry that no longer matches a long function fails too.
# Entries read "path:name": "reason", e.g. "tasks/submit.cpp:Submitter::submit": "split by #40".
ALLOWED = {
}


def blanked(text):
    """The text with comments, string and character literals and preprocessor lines replaced by
    spaces, newlines kept (so that offsets map to the same lines)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":  # a preprocessor line, with its continuations
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20]) if c == "R" else None
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i)
            j = n if end < 0 else end + len(raw.group(1)) + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # 1'000 is a number
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


QUALIFIERS = r"(\s*(const|noexcept(\([^)]*\))?|override|final|mutable|volatile|&&?|->[^{;]*|TESSERA_\w+))*"
BODY = re.compile(r"\)" + QUALIFIERS + r"\s*(:[^;]*)?$", re.S)
SCOPE = re.compile(r"^\s*((template\s*<.*>\s*)?(class|struct|union|enum|namespace)\b|extern\s*$)", re.S)
NAME = re.compile(r"(operator\s*[^\s(]+|[~\w:]+)\s*(<[^()]*>)?\s*$")


def function_name(head):
    """The name before the parameter list of a function's head (its text before the body)."""
    operator = re.search(r"(operator\s*\(\))\s*\(", head)
    if operator:
        return operator.group(1).replace(" ", "")
    depth = 0
    for k, c in enumerate(head):
        if c == "(" and depth == 0:
            m = NAME.search(head[:k])
            return m.group(1) if m else "(lambda)"
        depth += c == "<"
        depth -= c == ">" and depth > 0
    return "?"


def long_functions(path, limit=LIMIT):
    return long_functions_in(path.read_text(errors="replace"), limit)


def long_functions_in(source, limit=LIMIT):
    text = blanked(source)
    found = []
    # One entry per open brace: (kind, statement start offset); kinds: scope, body, other.
    stack = []
    start = 0  # where the current statement began
    for i, c in enumerate(text):
        if c == ";":
            if not any(k == "body" for k, _ in stack):
                start = i + 1
        elif c == "{":
            inside = any(k == "body" for k, _ in stack)
            statement = text[start:i]
            if inside:
                kind = "other"
            elif SCOPE.search(statement) and "(" not in statement.split("{")[0]:
                kind = "scope"
            elif "(" in statement and BODY.search(statement.strip()):
                kind = "body"
            else:
                kind = "other"  # an initialiser's braces belong to the statement around them
            stack.append((kind, start))
            if kind != "other":
                start = i + 1
        elif c == "}" and stack:
            kind, begun = stack.pop()
            if kind == "body":
                statement = text[begun:i]
                first = begun + len(statement) - len(statement.lstrip())
                line = text.count("\n", 0, first) + 1
                lines = text.count("\n", first, i) + 1
                if lines > limit:
                    head = statement.lstrip().split("{")[0]
                    found.append((line, function_name(head), lines))
            if kind != "other":
                start = i + 1
    return found


def self_test():
    """The cases the brace counting must get right, on made-up sources."""
    def body(lines):  # a body of `lines` lines from signature to closing brace
        return "{\n" + "  x();\n" * (lines - 2) + "}\n"
    cases = [
        ("void f() " + body(151), [(1, "f", 151)]),
        ("void f() " + body(150), []),
        ("namespace a {\nstruct S : B {\n  int g(int x) const " + body(151) + "};\n}\n",
         [(3, "g", 151)]),
        ("S::S(int a)\n    : a_(a) " + body(160), [(1, "S::S", 161)]),
        ("bool S::operator()(int a) const " + body(152), [(1, "operator()", 152)]),
        ("auto f() -> int " + body(155), [(1, "f", 155)]),
        # braces inside strings, comments, raw strings and a lambda count for nothing
        ('void f() {\n  const char* s = "}}";\n  // }\n  auto l = [] { return R"x(}})x"; };\n'
         + "  y();\n" * 150 + "}\n", [(1, "f", 155)]),
        ("const int k[] = {\n" + "1,\n" * 200 + "};\n", []),
        ("#define M(x) { \\\n  x; }\nvoid f() " + body(151), [(3, "f", 151)]),
    ]
    failed = 0
    for source, expected in cases:
        got = long_functions_in(source)
        if got != expected:
            print(f"self-test: expected {expected}, found {got} in:\n{source[:200]}")
            failed = 1
    return failed


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(__file__).resolve().parent.parent
    status = 0
    seen = set()
    for folder, limit in FOLDERS.items():
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            for line, name, lines in long_functions(path, limit):
                key = f"{rel}:{name}"
                if key in ALLOWED:
                    seen.add(key)
                    continue
                print(f"{rel}:{line}: {name} is {lines} lines, more than {limit}: "
                      "split it into named steps (functions a reader can hold)")
                status = 1
    for key in sorted(set(ALLOWED) - seen):
        print(f"{key}: allowed as long, but no longer is (or was renamed): remove its entry "
              "from ALLOWED in scripts/check-function-length.py")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
