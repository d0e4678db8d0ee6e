"""layout_circles: circles of files inside one folder, for scripts/check-layout.

A folder reads well when its files stand in one order: each file uses only
files below it. Two kinds of use are found here, from the source text alone
(no build needed):
  - a .c file uses another when it names a non-static function or global
    variable the other defines at file scope (comments, strings and
    preprocessor lines are left out first, so a name in a comment is no use);
  - a header uses another when it includes it.
A set of files that reach each other through such uses is a circle: the
strongly connected components of the graph (Tarjan's algorithm), each shown
as one concrete cycle so the message says where to cut.

The definition finder is a brace counter, not a C parser: a top-level
statement ending in "{" whose head has a "(" is a function definition, one
ending in ";" without "(" is a variable. Alternative back ends that define
the same names (likwid_marker.c / likwid_none.c) are simply both definers.
"""
import os
import re

COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
PREPROCESSOR = re.compile(r'^\s*#(?:[^\n]*\\\n)*[^\n]*', re.M)
IDENT = re.compile(r'[A-Za-z_]\w*')
ATTRIBUTE = re.compile(r'__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)')
NOT_EXPORTED = ("static", "typedef", "extern")
TAGS = ("struct", "union", "enum")


def code_of(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read()
    text = COMMENT.sub(" ", text)
    text = STRING.sub('""', text)
    return ATTRIBUTE.sub(" ", PREPROCESSOR.sub(" ", text))


def top_level_statements(code):
    """Yields (head text, "{" or ";") for each statement at file scope."""
    depth, start = 0, 0
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                yield code[start:i], "{"
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            yield code[start:i], ";"
            start = i + 1


def definitions(code):
    """Names of the non-static functions and variables defined at file scope."""
    names = set()
    for text, end in top_level_statements(code):
        words = IDENT.findall(text)
        if not words or any(w in NOT_EXPORTED for w in words[:3]):
            continue
        if end == "{" and "(" in text:
            ids = IDENT.findall(text[:text.index("(")])
            if ids and (ids[0] not in TAGS or len(ids) > 2):
                names.add(ids[-1])
        elif end == ";" and "(" not in text and words[0] not in TAGS:
            ids = IDENT.findall(re.split(r'[=\[]', text)[0])
            if len(ids) >= 2:
                names.add(ids[-1])
    return names


def _components(graph):
    """Strongly connected components with more than one member (iterative Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(set(members))
    return found


def _one_cycle(graph, members):
    """A shortest cycle through the first member, inside the component."""
    start = min(members)
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return sorted(members)


def _cycles(graph):
    return [_one_cycle(graph, members) for members in _components(graph)]


def file_circles(c_files):
    """Cycles of .c files that use each other's definitions."""
    codes = {path: code_of(path) for path in c_files}
    defined = {path: definitions(code) for path, code in codes.items()}
    definers = {}
    for path, names in defined.items():
        for name in names:
            definers.setdefault(name, set()).add(path)
    graph = {}
    for path, code in codes.items():
        used = set(IDENT.findall(code)) - defined[path]
        graph[path] = {other for name in used for other in definers.get(name, ())
                       if other != path}
    return _cycles(graph)


def include_circles(headers, includes):
    """Cycles of headers that include each other (includes(path) yields (line, target))."""
    by_name = {}
    for path in headers:
        by_name.setdefault(os.path.basename(path), path)
    graph = {}
    for path in headers:
        graph[path] = set()
        for _, target in includes(path):
            beside = os.path.normpath(os.path.join(os.path.dirname(path), target))
            if beside in graph or beside in headers:
                graph[path].add(beside)
            elif os.path.basename(target) in by_name and by_name[os.path.basename(target)] != path:
                graph[path].add(by_name[os.path.basename(target)])
    graph = {path: {h for h in targets if h in graph} for path, targets in graph.items()}
    return _cycles(graph)
