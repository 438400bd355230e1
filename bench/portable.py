"""Benchmark results without the paths of the machine that ran them: `portable(obj, repo)` returns the JSON
value `obj` with every absolute path in its strings (alone or inside a command line) rewritten:
under the repository -> relative to it (`target/release/gpumon`); under a temporary directory
(`/tmp/NAME/...`) -> relative to that directory; system paths (/usr, /proc, /sys, /dev, /bin,
/etc) kept; anything else (an interpreter, a home directory) -> its file name. Figures are left
as they are.

usage: python3 bench/portable.py FILE.json...           rewrites result files in place (figures untouched)
       python3 bench/portable.py --check FILE.json...   fails naming the files that hold such paths
                                                        (scripts/test runs it on bench/results)
"""
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM = ("/usr/", "/proc/", "/sys/", "/dev/", "/bin/", "/etc/")
# An absolute path: a '/' at the start of a word (after a space, quote, '=', '(' or ':'), up to
# whitespace or a double quote.
PATH = re.compile(r"(?:(?<=^)|(?<=[\s'=(:]))/[^\s\"]+")


def _path(p, repos):
    for r in repos:
        r = r.rstrip("/")
        if p == r:
            return "."
        if p.startswith(r + "/"):
            return p[len(r) + 1:]
    if p.startswith(SYSTEM):
        return p
    m = re.match(r"/tmp/[^/]+/(.+)", p)
    if m:
        return m.group(1)
    return os.path.basename(p.rstrip("/")) or p


def portable(obj, repo=REPO):
    """`obj` (a JSON value) with its absolute paths made portable; `repo` is one root or a list."""
    repos = [str(repo)] if isinstance(repo, (str, os.PathLike)) else [str(r) for r in repo]
    if isinstance(obj, str):
        return PATH.sub(lambda m: _path(m.group(0), repos), obj)
    if isinstance(obj, list):
        return [portable(v, repos) for v in obj]
    if isinstance(obj, dict):
        return {portable(k, repos): portable(v, repos) for k, v in obj.items()}
    return obj


# Checkouts the committed results were measured in (other worktrees of this repository).
CHECKOUTS = re.compile(r"/work/(?:main|wt-[^/\s\"]+|wt/[^/\s\"]+)(?=/)")


def _numbers(v):
    if isinstance(v, dict):
        return [n for x in v.values() for n in _numbers(x)]
    if isinstance(v, list):
        return [n for x in v for n in _numbers(x)]
    return [] if isinstance(v, str) else [v]


def main(files, check=False):
    """Rewrite the paths in each file's text (a path ends at whitespace or a quote, so JSON escapes
    stay as they are) and check that the figures did not move."""
    raw = re.compile(r'(?:(?<=^)|(?<=[\s\'=(:"]))/[^\s"]+')
    bad = []
    for f in files:
        text = open(f).read()
        roots = sorted(set(CHECKOUTS.findall(text)), key=len, reverse=True)
        new = raw.sub(lambda m: _path(m.group(0), [REPO] + roots), text)
        if check:
            if new != text:
                bad.append(f)
            continue
        if _numbers(json.loads(new)) != _numbers(json.loads(text)):
            sys.exit(f"error: rewriting {f} would change its figures")
        with open(f, "w") as out:
            out.write(new)
    if bad:
        sys.exit(f"error: absolute paths of the machine that ran them in {', '.join(bad)}: "
                 "python3 bench/portable.py FILE rewrites them")


if __name__ == "__main__":
    args = sys.argv[1:]
    main([a for a in args if a != "--check"], check="--check" in args)

