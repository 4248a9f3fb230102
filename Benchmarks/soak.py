#!/usr/bin/env python3
"""Soak run of `reindex serve` (a benchmark script, not a test).

Starts `reindex serve` on a scratch index with 20 bundles — most well behaved, some that crash,
refuse or print garbage now and then — and queues REQUESTS requests (`reindex run --queue --ids`)
over time while serve works. At the end it checks that no request was lost (every queued
identifier reached an extension, or its request is recorded as failed), that serve left no
zombie, and samples serve's open descriptors and resident memory throughout to show they do not
grow.

    python3 Benchmarks/soak.py [--requests 10000] [--bundles 20] [--reindex .build/release/reindex]
"""
import argparse, json, os, random, shutil, signal, sqlite3, subprocess, sys, tempfile, time

EXTENSION = r"""#!/bin/sh
# A tiny extension in POSIX sh. The host's ids are 0 (initialize) and 1 (the one request).
# MODE: ok | crash | refuse | garbage, each misbehaviour on roughly one request in FAILEVERY.
read -r init
echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"extension":{"name":"soak","version":"1"},"capabilities":{}}}'
read -r request
ids=$(printf '%s' "$request" | sed -n 's/.*"identifiers":\[\([^]]*\)\].*/\1/p' | tr -d '"')
roll=$(( $(od -An -N2 -tu2 /dev/urandom) % FAILEVERY ))
if [ "$MODE" != ok ] && [ "$roll" -eq 0 ]; then
  case "$MODE" in
    crash) exit 3 ;;
    refuse) echo '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"not today"}}'; read -r x; exit 0 ;;
    garbage) echo 'this is not json'; read -r x; exit 0 ;;
  esac
fi
items=""
for id in $(printf '%s' "$ids" | tr ',' ' '); do
  items="$items${items:+,}{\"uniqueIdentifier\":\"$id\",\"attributes\":{\"title\":\"soak $id\"}}"
  echo "$id" >> "$RECORD"
done
[ -n "$items" ] && echo "{\"jsonrpc\":\"2.0\",\"method\":\"index/put\",\"params\":{\"items\":[$items]}}"
echo '{"jsonrpc":"2.0","id":1,"result":{}}'
read -r x
exit 0
"""


def sample(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    zombies = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z" and int(fields[1]) == pid:
                zombies += 1
        except OSError:
            pass
    return fds, rss, zombies


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=10000)
    parser.add_argument("--bundles", type=int, default=20)
    parser.add_argument("--reindex", default=".build/release/reindex")
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    reindex = os.path.abspath(args.reindex)
    work = tempfile.mkdtemp(prefix="reindex-soak-")
    extensions, index, record = f"{work}/extensions", f"{work}/index/index.sqlite", f"{work}/record"
    os.makedirs(extensions)
    modes = ["crash", "refuse", "garbage"] + ["ok"] * (args.bundles - 3)
    bundles = []
    for n, mode in enumerate(modes):
        identifier = f"com.example.soak.b{n:02d}"
        directory = f"{extensions}/{identifier}"
        os.makedirs(directory)
        with open(f"{directory}/ext.sh", "w") as script:
            script.write(EXTENSION)
        os.chmod(f"{directory}/ext.sh", 0o755)
        # The record file is made here and declared writable: the extension runs sandboxed.
        open(f"{record}.{n:02d}", "a").close()
        manifest = {"manifestVersion": 1, "bundleIdentifier": identifier, "executable": "ext.sh",
                    "environment": {"MODE": mode, "FAILEVERY": "4", "RECORD": f"{record}.{n:02d}"},
                    "retry": {"maxAttempts": 3}, "sandbox": {"write": [f"{record}.{n:02d}"]}}
        with open(f"{directory}/manifest.json", "w") as out:
            json.dump(manifest, out)
        bundles.append(identifier)

    base = [reindex, "--index", index, "--extensions-path", extensions]
    serve_log = open(f"{work}/serve.log", "w")
    serve = subprocess.Popen(base + ["serve", "--rescan", "5", "--retry-base", "0.05", "--concurrency", str(args.concurrency)],
                             stdout=serve_log, stderr=serve_log)
    time.sleep(1.0)
    samples = [sample(serve.pid)]
    start = time.time()
    queued = {}
    random.seed(7)
    for n in range(args.requests):
        bundle = random.choice(bundles)
        identifier = f"item.{n}"
        result = subprocess.run(base + ["run", bundle, "--queue", "--ids", identifier], capture_output=True)
        if result.returncode != 0:
            print(f"queueing failed: {result.stderr.decode()}", file=sys.stderr)
            sys.exit(1)
        queued[identifier] = bundle
        if n % 500 == 0:
            samples.append(sample(serve.pid))
            print(f"soak: {n} queued, serve fds {samples[-1][0]}, rss {samples[-1][1]} KiB, zombies {samples[-1][2]}", file=sys.stderr)
    # Wait for the queue to drain.
    while True:
        db = sqlite3.connect(index, timeout=30)
        pending = db.execute("SELECT count(*) FROM requests WHERE state IN ('pending','running')").fetchone()[0]
        db.close()
        samples.append(sample(serve.pid))
        if pending == 0:
            break
        time.sleep(1)
    elapsed = time.time() - start
    time.sleep(2)
    final = sample(serve.pid)
    serve.send_signal(signal.SIGTERM)
    status = serve.wait(timeout=60)

    delivered = set()
    for name in os.listdir(work):
        if name.startswith("record."):
            with open(f"{work}/{name}") as f:
                delivered.update(line.strip() for line in f)
    db = sqlite3.connect(index)
    failed_ids = set()
    for (identifiers,) in db.execute("SELECT identifiers FROM requests WHERE state = 'failed'"):
        failed_ids.update(json.loads(identifiers or "[]"))
    states = dict(db.execute("SELECT state, count(*) FROM requests GROUP BY state").fetchall())
    runs = db.execute("SELECT count(*) FROM runs").fetchone()[0]
    outcomes = dict(db.execute("SELECT outcome, count(*) FROM runs GROUP BY outcome").fetchall())
    db.close()
    lost = [i for i in queued if i not in delivered and i not in failed_ids]
    fds = [s[0] for s in samples[1:]]
    rss = [s[1] for s in samples[1:]]
    report = {
        "requestsQueued": args.requests, "bundles": args.bundles, "seconds": round(elapsed, 1),
        "extensionRuns": runs, "runOutcomes": outcomes, "requestStates": states,
        "identifiersDelivered": len(delivered & set(queued)), "identifiersInFailedRequests": len(failed_ids),
        # A child is a zombie for the instant between its exit and the session's waitpid; what
        # matters is that none is left once the queue has drained.
        "lost": len(lost), "zombiesAtEnd": final[2], "zombiesSeenMidRun": max(s[2] for s in samples),
        "serveFds": {"first": fds[0], "max": max(fds), "last": final[0]},
        "serveRssKiB": {"first": rss[0], "max": max(rss), "last": final[1]},
        "serveExit": status,
    }
    print(json.dumps(report, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    ok = not lost and report["zombiesAtEnd"] == 0 and status == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
