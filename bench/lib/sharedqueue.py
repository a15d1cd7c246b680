"""Scenario 11: several Ferry daemons on one PostgreSQL queue (docs/CLUSTER.md), in the network
lab (tests/lab/cluster.py: each member a network namespace of its own, PostgreSQL and nginx on
another; root only).

  throughput  --cluster-files small files (10,000 of 16 KiB) queued through member 1's CLI, run by
              1, 2 and 3 members (each `--max-concurrent 16`): the time from queueing to the last
              completion, files per second, transfers claimed and started per second (the
              journal's `started` events, first to last), each member's share (nginx's log).
              Twice: with the links as they are (every member, PostgreSQL and nginx on this
              machine's cores: what coordination costs), and with each member's link shaped to
              --cluster-rate (8mbit), as each host of a real cluster has a network of its own
  handover    3 members, 12 files of 16 MiB at 1 MiB/s each (nginx limit_rate); once member 1
              runs some with bytes on disk it is killed (SIGKILL): the time until every one of
              its transfers runs on another member (the database polled every 50 ms), with the
              default lease of 10 s; --runs times

Each count of members gets a fresh lab (database, library, namespaces); the files are made once.
"""

import json
import os
import shutil
import sys
import time

from harness import REPO, is_root, log, summary

sys.path.insert(0, str(REPO / "tests" / "lab"))
from cluster import ClusterLab  # noqa: E402


def cluster(ctx):
    if not is_root():
        raise RuntimeError("cluster needs root: network namespaces and veth pairs (tests/lab/cluster.py)")
    for tool in ("ip", "nginx"):
        if not shutil.which(tool):
            raise RuntimeError(f"cluster needs {tool} (tests/lab/run installs the lab's packages)")
    os.environ["FERRY_BIN"] = str(ctx.ferry)
    www = ctx.work / "www-cluster"
    count = ctx.cluster_files
    names = [f"small/{i:05}.bin" for i in range(count)]
    if not (www / names[-1]).exists():
        log(f"  cluster: making {count} files of 16 KiB")
        (www / "small").mkdir(parents=True, exist_ok=True)
        for name in names:
            (www / name).write_bytes(os.urandom(16 << 10))
    results = {"files": count, "file_size": 16 << 10, "rate": ctx.cluster_rate, "throughput": {}, "shaped": {}, "handover": []}
    for members in (1, 2, 3):
        results["throughput"][members] = throughput(ctx, www, names, members)
    for members in (1, 2, 3):
        results["shaped"][members] = throughput(ctx, www, names, members, rate=ctx.cluster_rate)
    for run in range(ctx.runs or 3):
        results["handover"].append(handover(ctx))
        log(f"  cluster: hand-over run {run + 1}: {results['handover'][-1]['seconds']:.1f} s")
    results["handover_summary"] = summary([r["seconds"] for r in results["handover"]])
    return results


def fresh(folder):
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def throughput(ctx, www, names, members, rate=None):
    with ClusterLab(members=members, max_concurrent=16, www=www, workdir=fresh(ctx.work / f"cluster-{members}")) as lab:
        for k in range(1, members + 1):
            if rate:
                lab.shape_member(k, rate)
            lab.start_member(k, "--log-level", "warning")
        listing = lab.workdir / "urls.txt"
        listing.write_text("".join(lab.url(name) + "\n" for name in names))
        began = time.time()
        lab.cli(1, "get", "--no-wait", "-i", listing, timeout=600)
        queued = time.time() - began
        lab.wait(lambda: int(lab.psql("SELECT COUNT(*) FROM transfer WHERE state = 'completed'")) == len(names), 1800,
                 f"{len(names)} files with {members} member(s)", interval=0.2)
        elapsed = time.time() - began
        first, last = (float(v) for v in lab.psql(
            """SELECT EXTRACT(EPOCH FROM min("createdAt")), EXTRACT(EPOCH FROM max("createdAt")) FROM event WHERE kind = 'started'"""
        ).split("|"))
        started = int(lab.psql("SELECT COUNT(*) FROM event WHERE kind = 'started'"))
        failed = int(lab.psql("SELECT COUNT(*) FROM transfer WHERE state <> 'completed'"))
        by_member = {}
        for request in lab.nginx_requests():
            k = next((k for k, ip in lab.member_ip.items() if ip == request["remote_addr"]), 0)
            by_member[k] = by_member.get(k, 0) + 1
        result = {
            "members": members, "seconds": elapsed, "queued_seconds": queued, "files_per_second": len(names) / elapsed,
            "started": started, "started_per_second": started / max(last - first, 1e-3), "not_completed": failed,
            "requests": sum(by_member.values()), "share": {f"m{k}": n for k, n in sorted(by_member.items())},
        }
        log(f"  cluster: {members} member(s){', links ' + rate if rate else ''}: {elapsed:.1f} s, {result['files_per_second']:.0f} files/s, "
            f"{result['started_per_second']:.0f} started/s, shares {json.dumps(result['share'])}")
        return result


def handover(ctx):
    with ClusterLab(members=3, max_concurrent=2, server_extra="location /slow/ { limit_rate 1m; }",
                    workdir=fresh(ctx.work / "cluster-handover")) as lab:
        for i in range(12):
            lab.add_file(f"slow/{i}.bin", 16 << 20, seed=i)
        for k in (1, 2, 3):
            lab.start_member(k, "--log-level", "warning")
        lab.get(2, [lab.url(f"slow/{i}.bin") for i in range(12)])

        def running_on_m1():
            rows = lab.db("""SELECT id FROM transfer WHERE "owner" = 'm1' AND state = 'running' AND "durableBytes" > 0""")
            return [int(r[0]) for r in rows] or None
        held = lab.wait(running_on_m1, 60, "member 1 to run transfers", interval=0.05)
        lab.kill_member(1)
        killed = time.time()

        def elsewhere():
            states = lab.states()
            return all(states[i][0] == "running" and states[i][1] in ("m2", "m3") or states[i][0] == "completed" for i in held)
        lab.wait(elsewhere, 60, "member 1's transfers to run elsewhere", interval=0.05)
        return {"seconds": time.time() - killed, "transfers": len(held)}


def markdown(result):
    from report import span
    lines = [
        f"{result['files']:,} files of {result['file_size'] >> 10} KiB from nginx, queued through member 1's CLI "
        "(`ferry get --no-wait -i`); each member `--max-concurrent 16`, a network namespace of its own, PostgreSQL "
        "and nginx on another (tests/lab/cluster.py). *Started per second*: the journal's `started` events, first to "
        "last.",
        "",
        "| members | all done | files/s | started/s | queueing took | requests | share | not completed |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, key in (("as they are", "throughput"), (f"each member's link {result['rate']}", "shaped")):
        for members, entry in sorted(result[key].items(), key=lambda item: int(item[0])):
            share = ", ".join(f"{k} {n}" for k, n in entry["share"].items())
            lines.append(f"| {members} ({label}) | {entry['seconds']:.1f} s | {entry['files_per_second']:.0f} | "
                         f"{entry['started_per_second']:.0f} | {entry['queued_seconds']:.1f} s | {entry['requests']:,} | {share} | "
                         f"{entry['not_completed']} |")
    handover, _ = span(result["handover_summary"])
    lines += [
        "",
        f"Hand-over: member 1 killed (SIGKILL) while running 16 MiB files at 1 MiB/s; time until every one of its "
        f"transfers ran on another member (lease 10 s): {handover} (median) over {len(result['handover'])} run(s): "
        + ", ".join("%.1f s" % r["seconds"] for r in result["handover"]) + ".",
    ]
    return "\n".join(lines)
