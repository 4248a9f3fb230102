#!/usr/bin/env python3
"""Checks that the documentation names only files that exist.

    python3 Scripts/check-doc-links.py [FILE.md …]

Reads README.md, CONTRIBUTING.md, BENCHMARKS.md, docs/*.md and SDKs/*/README.md (or the files
given) and checks two kinds of mention:

1. Markdown links and images, `[text](target)`, whose target is not a URL or an anchor: the
   target (without its `#fragment`) must exist, relative to the document's directory.
2. Backticked paths, text without spaces in backticks (a `:LINE` suffix is allowed):
   - a repository path, whose first component is a top-level entry of the repository (a tracked
     directory such as `Sources/` or a tracked file such as `Package.swift`): `Scripts/demo.sh`,
     `docs/QUERIES.md`. It must exist relative to the repository's root.
   - a shortened path to a file, with a `/` but not from the root (`Store/Staging.swift` where
     the text is about ReindexStore, `tests/support.py` in an SDK's README): it must exist
     relative to the document's directory or end the path of a tracked file. Method names
     (`index/put`), home-directory paths (`~/.local`) and absolute paths are not checked.
   - a file name with a source or document extension (`BundleLint.swift`, `bookshelf.py`): a tracked
     file must have that name, or it must exist relative to the document's directory.
   A file name the document's own code blocks show is its example's (a manifest's
   `"executable": "notes.py"`), not the repository's. Placeholders are not paths: text holding `…`, `...`, `*`, `<`, `$`, `{`, `|` or an upper-case
   component (`NAME`, `BUNDLE_ID`) is skipped, and so is a path under a dot-directory the
   repository does not track (`.demo/`, `.vscode/`: made by a run or by the reader). Fenced code
   blocks are skipped (they show commands and output, not references).

Prints each missing path as `FILE:LINE: PATH does not exist` and exits 1 when there is one,
0 otherwise.
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"(`+)(.+?)\1")
PLACEHOLDER = ("…", "...", "*", "<", ">", "$", "{", "|", "?")


def default_documents():
    documents = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"]
    documents += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    documents += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "SDKs", "*", "README.md")))
    return [d for d in documents if os.path.isfile(os.path.join(ROOT, d))]


def tracked_files():
    """Every tracked path (or, outside a git checkout, every file under the root)."""
    try:
        listing = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return [path for path in listing.split("\n") if path]
    except (OSError, subprocess.CalledProcessError):
        return [os.path.relpath(os.path.join(d, f), ROOT) for d, _, files in os.walk(ROOT) for f in files]


def missing_links(document, line):
    directory = os.path.dirname(os.path.join(ROOT, document))
    for match in LINK.finditer(line):
        target = match.group(1)
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if path and not os.path.exists(os.path.join(directory, path)):
            yield target


NAMED_FILE = re.compile(r"^[A-Za-z0-9_+-]+(\.[A-Za-z0-9_-]+)*\.(swift|py|sh|md|ts|js|json|sql|service)$")
PLACEHOLDER_COMPONENT = re.compile(r"^[A-Z][A-Z0-9_]*$")


class Repository:
    def __init__(self):
        self.files = tracked_files()
        self.top = {path.split("/", 1)[0] for path in self.files}
        self.names = {path.rsplit("/", 1)[-1] for path in self.files}
        self.directories = {path.rsplit("/", 1)[0] for path in self.files if "/" in path}

    def ends_a_tracked_path(self, text):
        text = text.rstrip("/")
        suffix = "/" + text
        return any(path.endswith(suffix) for path in self.files) or any(d.endswith(suffix) for d in self.directories)


def missing_code_paths(document, line, repository):
    directory = os.path.dirname(os.path.join(ROOT, document))
    for match in CODE.finditer(line):
        text = match.group(2).strip()
        if not text or any(c.isspace() for c in text) or any(p in text for p in PLACEHOLDER):
            continue
        text = re.sub(r":\d+(-\d+)?$", "", text)
        components = [c for c in text.split("/") if c]
        if not components or any(PLACEHOLDER_COMPONENT.match(c) for c in components):
            continue
        first = components[0]
        if first in repository.top and ("/" in text or "." in text):
            if not os.path.exists(os.path.join(ROOT, text)):
                yield text
        elif "/" in text.rstrip("/") and NAMED_FILE.match(components[-1]) and not re.match(r"^[~/\"@=]|^[a-z]+:", text) and "=" not in text:
            if first.startswith(".") and first not in (".", "..") and first not in repository.top:
                continue
            if not os.path.exists(os.path.join(directory, text)) and not repository.ends_a_tracked_path(text.lstrip("./")):
                yield text
        elif NAMED_FILE.match(text):
            if text not in repository.names and not os.path.exists(os.path.join(directory, text)):
                yield text


def fence_flags(lines):
    """For each line, whether it lies inside a fenced code block (the fences themselves not)."""
    flags, fenced = [], False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            flags.append(False)
        else:
            flags.append(fenced)
    return flags


def check(document, repository):
    with open(os.path.join(ROOT, document), encoding="utf-8") as f:
        lines = f.readlines()
    inside = fence_flags(lines)
    # A file name the document's own code blocks show (a manifest's "executable": "notes.py") is
    # the example's file, not one of the repository's.
    shown = "".join(line for line, fenced in zip(lines, inside) if fenced)
    problems = []
    for number, (line, fenced) in enumerate(zip(lines, inside), 1):
        if fenced or line.lstrip().startswith(("```", "~~~")):
            continue
        for path in missing_links(document, line):
            problems.append(f"{document}:{number}: link target {path} does not exist")
        # Link targets were checked above; the rest of the line for backticked paths.
        for path in missing_code_paths(document, LINK.sub("", line), repository):
            if "/" not in path and re.search(r"(^|[^\w.-])" + re.escape(path) + r"($|[^\w.-])", shown, re.M):
                continue
            problems.append(f"{document}:{number}: {path} does not exist")
    return problems


def main(arguments):
    documents = arguments or default_documents()
    repository = Repository()
    problems = []
    for document in documents:
        problems += check(document, repository)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-doc-links: {len(problems)} path(s) named in the documentation do not exist", file=sys.stderr)
        return 1
    print(f"check-doc-links: every path named in {len(documents)} documents exists", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
