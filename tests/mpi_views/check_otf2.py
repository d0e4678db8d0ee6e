#!/usr/bin/python3
"""check_otf2.py - scope-export --format otf2 with MPI records.

    check_otf2.py messages --mpiexec M --program HALO --export E --otf2-print P --workdir W
        halo.c on 4 ranks; in otf2-print's output every MPI_SEND is matched
        to an MPI_RECV by communicator, sender, receiver and tag in order,
        with the same length, and the messages are exactly the isends of
        halo.c; MPI_COMM_WORLD is defined; the allreduce and comm_dup are
        collective records; the calls that cannot be matched (the
        MPI_ANY_SOURCE receive, sendrecv, the duplicate communicator) are
        named in the export's note.
    check_otf2.py split --mpiexec M --program SPLIT --export E --otf2-print P --workdir W
        split.c on 4 ranks: the messages inside communicators split from
        MPI_COMM_WORLD, placed at world ranks through their maps: every
        send matched to its receive; the collectives on the split
        communicators on one archive communicator per member list, whose
        group lists the world ranks in communicator order.
    check_otf2.py long_name --export E --otf2-print P --workdir W
        a region name of 4 MiB (one definition chunk of OTF2 cannot hold
        it): the export succeeds and the name is cut with its length said.

Exit 0 pass, 1 fail, 77 skip (no mpirun or h5py).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checks  # noqa: E402
from halo_job import expected_pairs, run_halo  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("case", choices=["messages", "split", "long_name"])
ap.add_argument("--mpiexec")
ap.add_argument("--program")
ap.add_argument("--export", required=True)
ap.add_argument("--otf2-print", dest="otf2_print", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()

check = checks.Checks("check_otf2")


def export(path, where):
    out = os.path.join(where, "trace")
    p = subprocess.run([args.export, "--format", "otf2", "-o", out, path], capture_output=True,
                       text=True)
    if p.returncode == 3 and "no OTF2 support" in p.stderr:
        print("SKIP: this build has no OTF2")
        sys.exit(77)
    check(p.returncode == 0, f"scope-export --format otf2 exits 0 ({p.returncode}: {p.stderr})")
    events = subprocess.run([args.otf2_print, os.path.join(out, "traces.otf2")],
                            capture_output=True, text=True)
    defs = subprocess.run([args.otf2_print, "-G", os.path.join(out, "traces.otf2")],
                          capture_output=True, text=True)
    check(events.returncode == 0 and defs.returncode == 0, "otf2-print reads the archive")
    return p.stderr, events.stdout, defs.stdout


if args.case == "split":
    if not args.mpiexec or not (shutil.which(args.mpiexec) or os.path.exists(args.mpiexec)):
        print("SKIP: no mpiexec")
        sys.exit(77)
    path = run_halo(args.mpiexec, args.program, 4, args.workdir)
    if path is None:
        sys.exit(1)
    note, events, defs = export(path, args.workdir)
    location_rank = {int(m.group(1)): int(m.group(2)) for m in
                     re.finditer(r'^LOCATION\s+(\d+)\s.*Group: "rank (\d+)"', defs, re.M)}
    sends, recvs = defaultdict(list), defaultdict(list)
    line = re.compile(r'^(MPI_SEND|MPI_RECV)\s+(\d+)\s+(\d+)\s+(Receiver|Sender): (\d+) .*'
                      r'Communicator: "([^"]*)" <(\d+)>, Tag: (\d+), Length: (\d+)', re.M)
    for m in line.finditer(events):
        kind, loc, _, _, peer, _, comm, tag, length = m.groups()
        me = location_rank[int(loc)]
        (sends if kind == "MPI_SEND" else recvs)[
            (int(comm), me, int(peer)) if kind == "MPI_SEND" else (int(comm), int(peer), me)
        ].append((int(tag), int(length)))
    # split.c: world w sends 3 messages of (w + 1) * 10 bytes (tag 7) to its
    # partner in the split (0 <-> 2, 1 <-> 3), received naming the source
    want = {(0, w, p): [(7, (w + 1) * 10)] * 3 for w, p in ((0, 2), (2, 0), (1, 3), (3, 1))}
    check(sends == want, f"the sends at world ranks: {dict(sends)}")
    check(recvs == want, f"every send matched to its receive: {dict(recvs)}")
    # the collectives on the two split communicators: one archive comm per
    # member list, its group the world ranks in communicator order (key =
    # -world rank: {2, 0} and {3, 1}), every rank's allreduce, reduce and
    # comm_free there; split itself runs on MPI_COMM_WORLD
    comm_name = dict(re.findall(r'^COMM\s+(\d+)\s+Name: "([^"]*)"', defs, re.M))
    group_of = {int(c): int(g) for c, g in
                re.findall(r'^COMM\s+(\d+)\s.*Group: "[^"]*" <(\d+)>', defs, re.M)}
    members = {int(g): [int(x) for x in re.findall(r'(\d+) \("rank', ms)] for g, ms in
               re.findall(r'^GROUP\s+(\d+)\s.*Type: COMM_GROUP.*Members: (.*)$', defs, re.M)}
    sub = {c: members.get(g) for c, g in group_of.items() if c != 0}
    check(sorted(sub.values()) == [[2, 0], [3, 1]],
          f"two split communicators, members in communicator order: {sub} ({comm_name})")
    ends = defaultdict(list)
    for m in re.finditer(r'^MPI_COLLECTIVE_END\s+(\d+)\s.*Operation: (\w+), '
                         r'Communicator: "[^"]*" <(\d+)>, Root: ([^,]+),', events, re.M):
        loc, op, comm, root = m.groups()
        ends[(location_rank[int(loc)], int(comm))].append((op, root.split()[0]))
    for w in range(4):
        mine = [c for c, g in sub.items() if w in (g or [])]
        check(len(mine) == 1, f"world rank {w} is in one split communicator: {sub}")
        got = ends.get((w, mine[0] if mine else -1), [])
        want_ops = [("ALLREDUCE", "NONE"), ("REDUCE", "0")] * 2
        check([e for e in got if e[0] != "DESTROY_HANDLE"] == want_ops and
              [e[0] for e in got].count("DESTROY_HANDLE") == 2,
              f"world rank {w}: allreduce, reduce (root 0) twice and two comm_free on its split "
              f"communicator: {got}")
    check("0 calls on communicators" in note or not note,
          f"no collective left without its communicator: {note.strip()}")
elif args.case == "messages":
    if not args.mpiexec or not (shutil.which(args.mpiexec) or os.path.exists(args.mpiexec)):
        print("SKIP: no mpiexec")
        sys.exit(77)
    ranks = 4
    path = run_halo(args.mpiexec, args.program, ranks, args.workdir)
    if path is None:
        sys.exit(1)
    note, events, defs = export(path, args.workdir)
    location_rank = {int(m.group(1)): int(m.group(2)) for m in
                     re.finditer(r'^LOCATION\s+(\d+)\s.*Group: "rank (\d+)"', defs, re.M)}
    check(re.search(r'^COMM\s+0\s+Name: "MPI_COMM_WORLD"', defs, re.M),
          "MPI_COMM_WORLD is defined as communicator 0")
    sends, recvs = defaultdict(list), defaultdict(list)
    line = re.compile(r'^(MPI_SEND|MPI_RECV)\s+(\d+)\s+(\d+)\s+(Receiver|Sender): (\d+) .*'
                      r'Communicator: "([^"]*)" <(\d+)>, Tag: (\d+), Length: (\d+)', re.M)
    for m in line.finditer(events):
        kind, loc, _, _, peer, _, comm, tag, length = m.groups()
        me = location_rank[int(loc)]
        if kind == "MPI_SEND":
            sends[(int(comm), me, int(peer), int(tag))].append(int(length))
        else:
            recvs[(int(comm), int(peer), me, int(tag))].append(int(length))
    # halo.c's 40 isends, and rank 0's two sends of 7 bytes to rank 1 on a
    # duplicate of MPI_COMM_WORLD (placed through its world-rank map):
    # rank 1 received one naming its source, the other from MPI_ANY_SOURCE
    # (no record: the one send left unmatched)
    _, messages = expected_pairs(ranks)
    dup = (0, 1, 5)
    check(sum(map(len, sends.values())) == 42 and sum(map(len, recvs.values())) == 41,
          f"42 sends and 41 receives ({sum(map(len, sends.values()))}, "
          f"{sum(map(len, recvs.values()))})")
    matched = {k: v for k, v in sends.items() if k[1:] != dup}
    check(matched == {k: v for k, v in recvs.items() if k[1:] != dup},
          "every send matched to its receive (comm, sender, receiver, tag, in order, same length)")
    check(sends.get((0,) + dup) == [7, 7] and recvs.get((0,) + dup) == [7],
          f"the duplicate's messages on world ranks 0 -> 1: sends {sends.get((0,) + dup)}, "
          f"receives {recvs.get((0,) + dup)}")
    got = {(f, t, tag): lengths for (_, f, t, tag), lengths in matched.items()}
    check(got == messages, f"the messages are halo.c's isends: {sorted(got.items())}")
    ends = re.findall(r'^MPI_COLLECTIVE_END\s.*Operation: (\w+)', events, re.M)
    check(ends.count("ALLREDUCE") == ranks, f"one allreduce per rank: {ends}")
    check(ends.count("CREATE_HANDLE") == ranks, f"one comm_dup per rank: {ends}")
    check(len(re.findall(r'^MPI_COLLECTIVE_BEGIN\s', events, re.M)) == len(ends),
          "every collective begins and ends")
    check("1 receives from MPI_ANY_SOURCE" in note and "12 sendrecv calls" in note,
          f"the note names what has no record: {note.strip()}")
else:
    try:
        import synthetic
    except ImportError as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    path = os.path.join(args.workdir, "long.h5")
    long_name = "x" * (4 << 20)
    synthetic.write(path, ["outer", long_name],
                    [{"region": 0, "rank": 0, "starts": [100], "durations": [1000]},
                     {"region": 1, "rank": 0, "starts": [200], "durations": [10]}])
    _, events, defs = export(path, args.workdir)
    check(f"... [cut: {4 << 20} bytes]" in defs, "the long name is cut and says its length")
    check(len(re.findall(r"^ENTER\s", events, re.M)) == 2, "both calls are in the trace")

if check.failures:
    check.finish()
print("ok")
