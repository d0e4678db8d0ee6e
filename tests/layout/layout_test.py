#!/usr/bin/env python3
"""layout_test.py SOURCE WORK - scripts/check-layout fails on damage.

Copies the parts of the source tree the checker reads into WORK, then
breaks them one way at a time and expects exit 1 with a line naming the
file and the problem:
  upward     format/ includes a lifecycle/ header (a cycle in the making)
  bare       an internal include without its module ("reader.h")
  loose      a .c file directly in c/src
  public     a tool in cli/ includes an internal header
  circle     two files of util/ that call each other (a file-level circle)
  headers    two headers of util/ that include each other
  views      the picture library (cli/views) includes a tool's header
The untouched copy must pass (exit 0), so a failure is the damage's doing.
"""
import os
import shutil
import subprocess
import sys

source, work = sys.argv[1:3]
checker = os.path.join(source, "scripts", "check-layout")
PARTS = ["c/src", "merge/src", "cli", "pmpi", "scripts/check-layout",
         "scripts/layout_circles.py"]


def fresh_copy(name):
    root = os.path.join(work, name)
    if os.path.exists(root):
        shutil.rmtree(root)
    for part in PARTS:
        src, dst = os.path.join(source, part), os.path.join(root, part)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
    return root


def check(root):
    p = subprocess.run([sys.executable, checker, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def prepend(path, line):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(line + "\n" + text)


failures = 0
rc, out = check(fresh_copy("clean"))
if rc != 0:
    print(f"FAIL: the untouched copy does not pass:\n{out}")
    failures += 1

cases = {
    "upward": (lambda r: prepend(os.path.join(r, "c/src/format/schema.c"),
                                 '#include "lifecycle/profiler.h"'),
               "c/src/format/schema.c:1: format includes lifecycle/profiler.h"),
    "bare": (lambda r: prepend(os.path.join(r, "c/src/analysis/stats.c"), '#include "reader.h"'),
             'c/src/analysis/stats.c:1: include "reader.h" must name its module'),
    "loose": (lambda r: open(os.path.join(r, "c/src/stray.c"), "w").close(),
              "c/src/stray.c: a file outside the module folders"),
    "public": (lambda r: prepend(os.path.join(r, "cli/scope-inspect.c"),
                                 '#include "format/reader.h"'),
               "cli/scope-inspect.c:1: cli/ uses the public API only"),
}


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def two_units_calling_each_other(root):
    # Each declares the other's function itself: a declaration hides nothing.
    util = os.path.join(root, "c/src/util")
    write(os.path.join(util, "ping.c"),
          "void spi_pong(int n);\n/* spi_pong in a comment is no use */\n"
          "void spi_ping(int n) { if (n) spi_pong(n - 1); }\n")
    write(os.path.join(util, "pong.c"),
          "void spi_ping(int n);\nvoid spi_pong(int n) { if (n) spi_ping(n - 1); }\n")


def two_headers_including_each_other(root):
    util = os.path.join(root, "c/src/util")
    write(os.path.join(util, "left.h"), '#include "util/right.h"\n')
    write(os.path.join(util, "right.h"), '#include "util/left.h"\n')


cases["circle"] = (two_units_calling_each_other,
                   "c/src/util: files that call each other in a circle: ping.c -> pong.c -> ping.c")
cases["headers"] = (two_headers_including_each_other,
                    "c/src/util: headers that include each other in a circle: left.h -> right.h -> left.h")

cases["views"] = (lambda r: prepend(os.path.join(r, "cli/views/flame_tree.c"),
                                    '#include "../scope_diff.h"'),
                  'cli/views/flame_tree.c:1: cli/views includes the tool header "../scope_diff.h"')

for name, (damage, expected) in cases.items():
    root = fresh_copy(name)
    damage(root)
    rc, out = check(root)
    if rc != 1 or expected not in out:
        print(f"FAIL: {name}: exit {rc}, expected 1 and a line with {expected!r}; got:\n{out}")
        failures += 1
    else:
        print(f"ok: {name}: {expected}")
sys.exit(1 if failures else 0)
