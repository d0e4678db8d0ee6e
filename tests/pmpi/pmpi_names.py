"""What the pmpi tests know about MPI region names, kept apart from the
runner (check_pmpi.py) so the synthetic scope-inspect test
(check_inspect_bytes.py) decodes names by the same rules:

- package_parse: the Python package's parse_mpi_region, by the rule issue 28
  states (not a copy of the package, so a change of ours that the package
  would not read fails here);
- canonical_problem: our stricter form (docs/FORMAT.md §4.6): the six keys
  in the package's order, then request= (waits only), recv_bytes=
  (sendrecv only), overflow=1, lang=native last;
- wrapped_ops: the operations of pmpi/spp_ops.h, so a new row of the table
  that no test program calls fails the plan check;
- expected: the regions and call counts of pmpi_app's plan per rank;
- program_messages: the point-to-point bytes the plan sends (each message
  once), computed from the program's calls, not from any name;
- byte_role: where scope-inspect counts a name's bytes.
"""
import os
import re

REQUIRED = ("kind", "bytes", "peer", "root", "tag", "comm")
OPS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pmpi", "spp_ops.h")


def package_parse(name):
    """Issue 28's rule: split on spaces; the first token is mpi:<op>; every
    other token key=value (a token without '=' fails the whole name); keys
    kind, bytes, peer, root, tag, comm required, the last five integers;
    other keys ignored. None when the name does not parse."""
    if not name.startswith("mpi:"):
        return None
    parts = name.split(" ")
    try:
        values = dict(part.split("=", 1) for part in parts[1:])
        info = {"op": parts[0][4:], "kind": values["kind"]}
        for key in REQUIRED[1:]:
            info[key] = int(values[key])
        info["request"] = values.get("request")
        return info
    except (KeyError, TypeError, ValueError):
        return None


_CANONICAL = re.compile(
    r"mpi:(?P<op>[a-z_]+) kind=(?P<kind>point-to-point|collective|wait)"
    r" bytes=-?\d+ peer=-?\d+ root=-?\d+ tag=-?\d+ comm=-?\d+"
    r"(?P<request> request=(?:[a-z_]+))?(?P<recv> recv_bytes=-?\d+)?( overflow=1)? lang=native")


def canonical_problem(name):
    """None when name has exactly our form, else what is wrong."""
    m = _CANONICAL.fullmatch(name)
    if not m:
        return "not mpi:<op> kind= bytes= peer= root= tag= comm= [request=] [recv_bytes=] " \
               "[overflow=1] lang=native"
    if (m["kind"] == "wait") != (m["request"] is not None):
        return "request= on every wait and on nothing else"
    if (m["op"] == "sendrecv") != (m["recv"] is not None):
        return "recv_bytes= on sendrecv and on nothing else"
    return None


def decode(name):
    """Every token of a name: {'op': ..., key: value...} (values as text)."""
    parts = name.split(" ")
    d = dict(part.split("=", 1) for part in parts[1:])
    d["op"] = parts[0][4:]
    return d


def wrapped_ops():
    """The <lower> column of SPP_OPS: every operation the library wraps."""
    with open(OPS_H) as f:
        return set(re.findall(r"^\s*X\((\w+),", f.read(), re.M))


def byte_role(op, kind):
    """Where scope-inspect counts a name's bytes: sent, received, both
    (sendrecv), collective, or nowhere (waits)."""
    if kind == "wait":
        return None
    if kind != "point-to-point":
        return "collective"
    if op == "sendrecv":
        return "sendrecv"
    return "received" if "recv" in op else "sent"


def program_messages(n):
    """Bytes of the point-to-point messages pmpi_app's plan sends over all
    ranks, each message once (every receive posts exactly the message's
    size, so this is also what the ranks receive): per rank 4 isends of 100
    ints, 2 sendrecvs of 8 doubles, an isend of 1 int, ssends of 2 and 3
    ints, a bsend of 4, an rsend of 5, issend/ibsend/irsend of 6, 7, 8; plus
    rank 0's send of 16 chars when there are two ranks or more."""
    ints = 4 * 100 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8
    return n * (4 * ints + 2 * 8 * 8) + (16 if n > 1 else 0)


def expected(rank, n, mode, comms):
    """{sorted (token, value) tuple: calls} of pmpi_app's plan at `rank` of
    n; comms: the rank's communicators' Fortran handles as printed by the
    program (world, half, copy, whole)."""
    left, right = (rank + n - 1) % n, (rank + 1) % n
    tri = n * (n + 1) // 2
    w = comms["world"]
    e = {}

    def add(calls, op, kind, nbytes=-1, peer=-1, root=-1, tag=-1, comm=-1, request=None,
            recv_bytes=None):
        d = dict(op=op, kind=kind, bytes=nbytes, peer=peer, root=root, tag=tag, comm=comm,
                 lang="native")
        if request is not None:
            d["request"] = request
        if recv_bytes is not None:
            d["recv_bytes"] = recv_bytes
        key = tuple(sorted((k, str(v)) for k, v in d.items()))
        e[key] = e.get(key, 0) + calls

    coll, p2p, wait = "collective", "point-to-point", "wait"
    if mode == "invalid":
        add(1, "send", p2p, -1, peer=0, tag=0, comm=w)
        add(1, "allreduce", coll, 4, comm=-1)
        add(1, "bcast", coll, -1, root=0, comm=w)
        return e
    add(2 + 2, "barrier", coll, 0, comm=w)
    add(3, "bcast", coll, 40, root=0, comm=w)
    add(5, "allreduce", coll, 8, comm=w)
    add(1, "reduce", coll, 16, root=0, comm=w)
    add(4, "irecv", p2p, 400, peer=left, tag=7, comm=w)
    add(4, "isend", p2p, 400, peer=right, tag=7, comm=w)
    add(4 + 1, "waitall", wait, request="mixed")
    add(2, "sendrecv", p2p, 64, peer=right, tag=3, comm=w, recv_bytes=64)
    if n > 1 and rank == 0:
        add(1, "send", p2p, 16, peer=1, tag=5, comm=w)
    if n > 1 and rank == 1:
        add(1, "recv", p2p, 16, peer=0, tag=5, comm=w)
    add(1, "irecv", p2p, 4, peer=right, tag=9, comm=w)
    add(1, "isend", p2p, 4, peer=left, tag=9, comm=w)
    add(1 + 1, "wait", wait, request="irecv")
    add(1, "wait", wait, request="isend")
    add(1, "test", wait, request="null")
    add(1, "gather", coll, 8, root=0, comm=w)
    add(1, "gatherv", coll, 4 * (tri if rank == 0 else rank + 1), root=0, comm=w)
    add(1, "scatter", coll, 12, root=0, comm=w)
    add(1, "scatterv", coll, 4 * (tri if rank == 0 else rank + 1), root=0, comm=w)
    add(1, "allgather", coll, 8, comm=w)
    add(1, "allgatherv", coll, 4 * tri, comm=w)
    add(1, "alltoall", coll, 4, comm=w)
    add(1, "alltoallv", coll, 4 * n, comm=w)
    add(1, "reduce_scatter", coll, 4 * n, comm=w)
    # plan_rest (the barriers and the second waitall are counted above)
    add(1, "irecv", p2p, 8, peer=left, tag=11, comm=w)
    add(1, "irecv", p2p, 12, peer=right, tag=12, comm=w)
    add(1, "ssend", p2p, 8, peer=right, tag=11, comm=w)
    add(1, "ssend", p2p, 12, peer=left, tag=12, comm=w)
    add(2, "waitany", wait, request="irecv")
    add(1, "irecv", p2p, 16, peer=left, tag=13, comm=w)
    add(1, "bsend", p2p, 16, peer=right, tag=13, comm=w)
    add(1, "waitsome", wait, request="irecv")
    add(1, "irecv", p2p, 20, peer=left, tag=14, comm=w)
    add(1, "rsend", p2p, 20, peer=right, tag=14, comm=w)
    for nbytes, tag, op in ((24, 15, "issend"), (28, 16, "ibsend"), (32, 17, "irsend")):
        add(1, "irecv", p2p, nbytes, peer=left, tag=tag, comm=w)
        add(1, op, p2p, nbytes, peer=right, tag=tag, comm=w)
    add(1, "testall", wait, request="null")
    add(1, "testany", wait, request="null")
    add(1, "scan", coll, 8, comm=w)
    add(1, "exscan", coll, 12, comm=w)
    add(1, "comm_split", coll, 0, comm=w)
    add(2, "allreduce", coll, 4, comm=comms["half"])
    add(1, "comm_free", coll, 0, comm=comms["half"])
    add(1, "comm_dup", coll, 0, comm=w)
    add(1, "barrier", coll, 0, comm=comms["copy"])
    add(1, "comm_free", coll, 0, comm=comms["copy"])
    add(1, "comm_create", coll, 0, comm=w)
    add(1, "comm_free", coll, 0, comm=comms["whole"])
    if mode == "filter":
        e = {k: v for k, v in e.items() if dict(k)["op"] in ("allreduce", "barrier")}
    return e


def coarsen(e, form):
    """expected() in the form SCOPE_PROFILER_MPI_NAMES=form asks for: the
    dropped values -1 (the keys stay), equal names merged."""
    if form == "full":
        return e
    out = {}
    for key, calls in e.items():
        d = dict(key)
        for k in ("peer", "root", "tag", "comm"):
            d[k] = "-1"
        if form == "op":
            d["bytes"] = "-1"
            if "recv_bytes" in d:
                d["recv_bytes"] = "-1"
        k2 = tuple(sorted(d.items()))
        out[k2] = out.get(k2, 0) + calls
    return out
