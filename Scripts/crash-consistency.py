#!/usr/bin/env python3
"""Crash-consistency loop: SIGKILL the `reindex` host at random moments of large runs and check,
after every kill, that the index is intact, that each bundle's visible items are entirely its old
set or entirely its new set, and that the interrupted request is still queued; then restart the
host, let it finish, and check that the result is complete and nothing committed was lost.

    swift build -c release --product reindex
    python3 Scripts/crash-consistency.py [--kills 200] [--seed N] [--reindex .build/release/reindex]
                                         [--items 20000] [--keep] [--verbose]

Standard library only (sqlite3 for reading the index directly). Everything happens in a scratch
directory (`--index`, `--extensions-path` and XDG_* pointed inside it); `--keep` keeps it, and it
is always kept when a check fails.

The extension is Tests/Fixtures/extensions/crashloop_indexer.py, in three bundles:

  com.crashloop.batched   reindexAll commits every 2,500 items with the client state "next=<k>"
                          and resumes from it; reindexItems commits every 5,000 identifiers
  com.crashloop.single    no commits at all: each request is one transaction at its
                          acknowledgement
  com.crashloop.shifting  no commits; which identifiers exist depends on the generation (1 in 7
                          swaps in or out), so a replacement also removes items and reindexItems
                          also deletes

Every item carries the run's generation (the word g<N>z in its title and first keyword; the
extension reads N from the file crashloop-generation in its bundle directory). The script keeps a
model of each bundle (identifier -> generation) and knows exactly what the old and the new set of
a request are.

Each iteration picks a bundle and `reindex run BUNDLE --all` or `--ids-from FILE` (every existing
identifier, shuffled), and sends SIGKILL to the host at a moment drawn uniformly from [0, D], D
being the expected duration of a full run of that kind: the median of the latest full runs of
the bundle (measured in the setup, then refreshed by runs that finish by themselves and by
takeovers with nothing committed; for reindexItems per identifier, times the identifiers asked
for). Runs that end by themselves before the moment are not kills; they are checked (they must
have succeeded and show the new set) and the loop goes on. After the kill:

  0. no extension process of this run is left: each should see end of input or a broken pipe and
     exit (grace 5 s, the protocol's shutdown grace); survivors are counted, then killed;
  1. integrity: PRAGMA integrity_check and foreign_key_check on a read-only connection opened
     after the host died, every item row has its full-text row and back, full-text titles match
     the items' titles, and `reindex check` (which adds FTS5's own integrity-check) says healthy
     (after restarts, the same without `reindex check`);
  2. generations: the bundle's live items (read with SQL, and with `reindex items --json`, and
     the old and new generation words with `reindex search`) are exactly the old set or exactly
     the new set. The one allowed in-between state is the protocol's own: a reindexItems of the
     batched bundle makes each batch/commit visible, so there the visible items may be the old
     set with a whole number of committed batches applied (counted apart, not a failure);
  3. queue: what the kill interrupted is classified from the requests table:
       before recorded  no request row yet (or, when a pending one was being taken over, it has
                        not counted a new attempt): the old set must be visible, nothing new
                        queued, and no restart is owed;
       recorded         pending/running: the old set (or committed batches) must be visible, and
                        `reindex status --json` must show it queued; for a reindexAll whose
                        batches were committed, the kept (invisible) generation must hold exactly
                        the items before the saved client state;
       acknowledged     done: the new set must be visible and nothing is queued.
     Then the restart: `reindex run BUNDLE` (takes over a pending reindexAll) or `reindex serve`
     until the queue is empty (the only way the exact interrupted reindexItems runs again); the
     same request must end done, the new set must be visible, the extension must have resumed
     from the saved client state, and nothing may be left queued or failed. A third of the
     interrupted reindexAll runs are not restarted at once but killed again first (a takeover
     killed mid-resume).

What the counters count: integrity failures — any check of 1 failing; mixed generations —
visible items that are neither the old nor the new set (nor old + whole committed batches), or
`reindex items`/`reindex search` disagreeing with the tables; requests lost — an interrupted
request not shown queued, an acknowledged one still queued, a restart that does not finish that
same request or does not show the complete new set, a resume that does not start at the saved
client state, a kept generation that does not hold exactly the committed batches, a run that ended
by itself with an error; extensions left running — processes still alive 5 s after their host
died (or ended).

At the end (and exit status 1 on any failure):
  crash-consistency: <N> kills (<a> during reindexAll, <b> during reindexItems), <c> integrity failures, <d> mixed generations, <e> requests lost, <f> extensions left running
  crash-consistency: <g> kills landed before the request was recorded, <h> after the acknowledgement
"""
import argparse
import base64
import ctypes
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from crashlib import (FIXTURE, REPO, extension_processes, extensions_left, host_environment, index_problems, kill_all, log,
                      read_only, run_host)

EXIT_GRACE = 5.0


class Bundle:
    def __init__(self, identifier, items, commit_every=0, items_commit_every=0, shift=0):
        self.identifier = identifier
        self.key = identifier.lower()
        self.items = items
        self.commit_every = commit_every
        self.items_commit_every = items_commit_every
        self.shift = shift
        self.directory = None
        self.model = {}          # uid -> generation: what is visible when no request is in flight
        # Full-run durations: seconds for reindexAll, seconds per identifier for reindexItems.
        self.durations = {"all": [], "items": []}

    def exists(self, n, gen):
        return self.shift <= 0 or (n + gen) % self.shift != 0

    def all_model(self, gen):
        return {"item.%d" % n: gen for n in range(self.items) if self.exists(n, gen)}

    def items_model(self, old, identifiers, gen):
        new = dict(old)
        for uid in identifiers:
            n = int(uid[5:])
            if self.exists(n, gen):
                new[uid] = gen
            else:
                new.pop(uid, None)
        return new

    def arguments(self):
        args = ["--items", str(self.items)]
        if self.commit_every:
            args += ["--commit-every", str(self.commit_every)]
        if self.items_commit_every:
            args += ["--items-commit-every", str(self.items_commit_every)]
        if self.shift:
            args += ["--shift", str(self.shift)]
        return args


class Loop:
    def __init__(self, options):
        self.o = options
        self.rng = random.Random(options.seed)
        self.reindex = os.path.abspath(options.reindex)
        self.scratch = tempfile.mkdtemp(prefix="crashloop-", dir=os.environ.get("TMPDIR") or "/tmp")
        self.index = os.path.join(self.scratch, "index", "index.sqlite")
        self.extensions = os.path.join(self.scratch, "extensions")
        self.token = "crashloop-%d-%d" % (os.getpid(), int(time.time()))
        self.env = host_environment(self.scratch, self.index, self.extensions)
        n = options.items
        self.bundles = [
            Bundle("com.crashloop.batched", n, commit_every=max(1, n // 8), items_commit_every=max(1, n // 4)),
            Bundle("com.crashloop.single", n),
            Bundle("com.crashloop.shifting", n, shift=7),
        ]
        self.generation = 0
        self.counts = dict(kills=0, all=0, items=0, integrity=0, mixed=0, lost=0, left=0, before=0, after=0,
                           recorded=0, partial=0, completed=0, chained=0, resumed=0, restarts=0)
        self.failures = []
        self.spent = dict(runs=0.0, restarts=0.0)
        self.survivor_pids = []

    # MARK: Plumbing

    def host(self, *args, check=True, timeout=300):
        """Runs `reindex ARGS` to completion; returns (status, stdout, stderr)."""
        status, out, err = run_host(self.reindex, self.env, self.scratch, args, timeout=timeout)
        if check and status != 0:
            raise RuntimeError("reindex %s: exit %d\n%s%s" % (" ".join(args), status, out, err))
        return status, out, err

    def fail(self, kind, text):
        self.counts[kind] += 1
        self.failures.append("%s: %s" % (kind, text))
        log("  FAIL (%s): %s" % (kind, text))

    def db(self):
        """A read-only connection, closed when the `with` block ends."""
        return read_only(self.index)

    def set_generation(self, gen):
        for bundle in self.bundles:
            path = os.path.join(bundle.directory, "crashloop-generation")
            with open(path + ".tmp", "w") as f:
                f.write("%d\n" % gen)
            os.rename(path + ".tmp", path)

    def log_path(self, bundle):
        return os.path.join(os.path.dirname(self.index), "logs", bundle.identifier + ".log")

    def log_size(self, bundle):
        try:
            return os.path.getsize(self.log_path(bundle))
        except OSError:
            return 0

    def log_since(self, bundle, offset):
        path = self.log_path(bundle)
        text = b""
        size = self.log_size(bundle)
        if size < offset:  # rotated: the rest of the old file, then the new one
            try:
                with open(path + ".1", "rb") as f:
                    f.seek(offset)
                    text = f.read()
            except OSError:
                pass
            offset = 0
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                text += f.read()
        except OSError:
            pass
        return text.decode("utf-8", "replace")

    # MARK: Setup

    def setup(self):
        if not os.access(self.reindex, os.X_OK):
            sys.exit("crash-consistency: %s is not an executable; build it with "
                     "'swift build -c release --product reindex' or pass --reindex PATH" % self.reindex)
        # Orphaned extensions (their host was killed) are re-parented to this process, so they can
        # be seen exiting and reaped instead of lingering as zombies of an init that never reaps.
        try:
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        except Exception:
            pass
        os.makedirs(self.extensions)
        for bundle in self.bundles:
            bundle.directory = os.path.join(self.extensions, bundle.identifier)
            os.makedirs(bundle.directory)
            os.chmod(bundle.directory, 0o755)
            target = os.path.join(bundle.directory, "crashloop_indexer.py")
            shutil.copyfile(FIXTURE, target)
            os.chmod(target, 0o755)
            manifest = {
                "manifestVersion": 1, "bundleIdentifier": bundle.identifier, "displayName": bundle.identifier,
                "version": "1", "executable": "crashloop_indexer.py", "arguments": bundle.arguments(),
                "environment": {"CRASHLOOP_TOKEN": self.token}, "retry": {"maxAttempts": 1000},
                "timeouts": {"startupSeconds": 30, "idleSeconds": 120},
            }
            with open(os.path.join(bundle.directory, "manifest.json"), "w") as f:
                json.dump(manifest, f)
            os.chmod(os.path.join(bundle.directory, "manifest.json"), 0o644)
        # Measure full runs: a first reindexAll, a replacement, a reindexItems of every item.
        for bundle in self.bundles:
            for kind in ("all", "all", "items", "all", "items"):
                self.generation += 1
                self.set_generation(self.generation)
                ids = self.write_ids(bundle) if kind == "items" else None
                first = not bundle.model  # no old generation to remove: not a typical run
                started = time.monotonic()
                self.host("run", bundle.identifier, *(["--ids-from", ids] if ids else ["--all"]), "--json")
                elapsed = time.monotonic() - started
                if kind == "all":
                    bundle.model = bundle.all_model(self.generation)
                else:
                    bundle.model = bundle.items_model(bundle.model, self.read_ids(ids), self.generation)
                if not first:
                    self.record_duration(bundle, kind, elapsed, ids)
                problems = self.check_visible_exact(bundle, bundle.model, "setup")
                if problems:
                    raise RuntimeError("setup: %s: %s" % (bundle.identifier, problems))
            log("setup: %s: %d items; full reindexAll %.2f s, reindexItems of every item %.2f s" % (
                bundle.identifier, len(bundle.model), self.window(bundle, "all"), self.window(bundle, "items", len(bundle.model))))

    def record_duration(self, bundle, kind, elapsed, ids_path=None, count=None):
        if kind == "items":
            count = count if count is not None else len(self.read_ids(ids_path))
            elapsed = elapsed / max(1, count)
        bundle.durations[kind] = (bundle.durations[kind] + [elapsed])[-7:]

    def window(self, bundle, kind, count=None):
        """How long a full run of this kind takes: the median of the latest full runs (for
        reindexItems, per identifier, times the identifiers asked for)."""
        median = statistics.median(bundle.durations[kind])
        return median * count if kind == "items" else median

    def write_ids(self, bundle):
        ids = sorted(bundle.model) if bundle.model else ["item.0"]
        self.rng.shuffle(ids)
        path = os.path.join(self.scratch, "ids-%s.txt" % bundle.key)
        with open(path, "w") as f:
            f.write("\n".join(ids) + "\n")
        return path

    @staticmethod
    def read_ids(path):
        with open(path) as f:
            return [line.strip() for line in f if line.strip()]

    # MARK: Processes

    def extension_processes(self):
        """Live processes of this run's extensions (see crashlib.extension_processes)."""
        return extension_processes(self.token)

    def check_no_extension_left(self, where):
        alive = extensions_left(self.token, EXIT_GRACE)
        if alive:
            self.counts["left"] += len(alive)
            self.failures.append("left: %s: extension process(es) %s still running %.0f s after the host ended" % (where, alive, EXIT_GRACE))
            log("  FAIL (left): %s: extension process(es) %s still running %.0f s after the host ended" % (where, alive, EXIT_GRACE))
            kill_all(alive)
            time.sleep(0.1)
            self.extension_processes()

    # MARK: Checks

    def check_integrity(self, where, full=True):
        """crashlib.index_problems, with `full` also `reindex check` (the slow part)."""
        problems = index_problems(self.index, lambda *args: self.host(*args, check=False), full=full)
        if problems:
            self.fail("integrity", "%s: %s" % (where, "; ".join(problems)))
            return False
        return True

    def visible_sql(self, bundle):
        with self.db() as db:
            rows = db.execute(
                "SELECT i.uid, json_extract(i.attributes, '$.keywords[0]') FROM items i "
                "JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen WHERE i.bundle = ?", (bundle.key,)).fetchall()
        return {uid: stamp_number(stamp) for uid, stamp in rows}

    def visible_cli(self, bundle):
        _, out, _ = self.host("items", bundle.identifier, "--json", "--limit", str(bundle.items * 2 + 10))
        result = {}
        for row in json.loads(out)["results"]:
            keywords = (row.get("attributes") or {}).get("keywords") or [None]
            result[row["uniqueIdentifier"]] = stamp_number(keywords[0])
        return result

    def search_count(self, bundle, gen, limit):
        _, out, _ = self.host("search", "g%dz" % gen, "--bundle", bundle.identifier, "--limit", str(limit), "--json")
        results = json.loads(out)["results"]
        wrong = [r["uniqueIdentifier"] for r in results if "g%dz" % gen not in (r.get("title") or "")]
        return len(results), wrong

    def check_visible_exact(self, bundle, expected, where):
        visible = self.visible_sql(bundle)
        if visible != expected:
            return describe_difference(visible, expected)
        return None

    def classify(self, bundle, visible, old, new, identifiers, gen, acknowledged):
        """'old', 'new', 'partial:<k>' (k committed batches of a reindexItems) or None (a mix)."""
        if visible == new and (acknowledged or new == old):
            return "new"
        if visible == old and not acknowledged:
            return "old"
        if identifiers is not None and bundle.items_commit_every and not acknowledged:
            every = bundle.items_commit_every
            for k in range(1, (len(identifiers) - 1) // every + 1):
                if visible == bundle.items_model(old, identifiers[:k * every], gen):
                    return "partial:%d" % k
        return None

    def check_views(self, bundle, sql_view, where, old_gen, new_gen):
        """The CLI shows what SQL shows: `items` lists the same items, and only the visible
        generation words are found by `search`."""
        cli_view = self.visible_cli(bundle)
        problems = []
        if cli_view != sql_view:
            problems.append("reindex items differs from the live rows: %s" % describe_difference(cli_view, sql_view))
        stamps = set(sql_view.values())
        for gen in sorted({old_gen, new_gen} - {None}):
            found, wrong = self.search_count(bundle, gen, 3)
            if wrong:
                problems.append("search g%dz returned items without the word: %s" % (gen, wrong))
            if (gen in stamps) != (found > 0):
                problems.append("search g%dz found %d item(s) but %d live item(s) carry it" % (
                    gen, found, sum(1 for s in sql_view.values() if s == gen)))
        if problems:
            self.fail("mixed", "%s: %s" % (where, "; ".join(problems)))

    def requests(self, bundle):
        with self.db() as db:
            return {row[0]: dict(id=row[0], kind=row[1], state=row[2], attempts=row[3], client_state=row[4])
                    for row in db.execute("SELECT id, kind, state, attempts, client_state FROM requests WHERE bundle = ?", (bundle.key,))}

    def open_requests(self):
        with self.db() as db:
            return db.execute("SELECT id, bundle, kind, state, attempts, last_error FROM requests WHERE state != 'done'").fetchall()

    def status_pending(self, bundle):
        _, out, _ = self.host("status", "--json")
        for entry in json.loads(out)["bundles"]:
            if entry["bundleIdentifier"].lower() == bundle.key:
                return entry["pending"], entry["failed"], entry["items"]
        return 0, 0, 0

    def kept_generation(self, bundle, request_id):
        """The committed batches of an unfinished reindexAll: its rows up to its last committed
        batch, and the committed rows a later, uncommitted batch replaced (kept aside to be put
        back). What group commits wrote after the last batch/commit is invisible and is discarded
        by the next attempt, so it is not part of what is kept."""
        with self.db() as db:
            rows = db.execute(
                "SELECT i.uid, json_extract(i.attributes, '$.keywords[0]') FROM items i "
                "LEFT JOIN staged_generations g ON g.bundle = i.bundle AND g.gen = i.gen "
                "WHERE i.bundle = ? AND i.gen = ? AND (i.batch IS NULL OR i.batch <= coalesce(g.committed_batch, 0)) "
                "UNION ALL SELECT uid, json_extract(attributes, '$.keywords[0]') FROM staged_undo WHERE request = ?",
                (bundle.key, request_id, request_id)).fetchall()
        return {uid: stamp_number(stamp) for uid, stamp in rows}

    # MARK: The loop

    def run(self):
        self.setup()
        log("seed %d, %d kills, scratch %s" % (self.o.seed, self.o.kills, self.scratch))
        started = time.monotonic()
        chain = None  # (bundle, request id, old model, new model, gen, links) of a killed reindexAll not yet restarted
        while self.counts["kills"] < self.o.kills:
            if chain:
                bundle, _, old, new, gen, links = chain
                kind = "all"
                identifiers = None
            else:
                bundle = self.rng.choice(self.bundles)
                kind = self.rng.choice(["all", "items"]) if bundle.model else "all"
                self.generation += 1
                gen = self.generation
                self.set_generation(gen)
                old = bundle.model
                identifiers = None
                if kind == "all":
                    new = bundle.all_model(gen)
                else:
                    ids_path = self.write_ids(bundle)
                    identifiers = self.read_ids(ids_path)
                    new = bundle.items_model(old, identifiers, gen)
                links = 0
            before = self.requests(bundle)
            args = ["run", bundle.identifier, "--json"] + (["--ids-from", ids_path] if kind == "items" else ["--all"])
            window = self.window(bundle, kind, len(identifiers) if kind == "items" else None)
            delay = self.rng.uniform(0, window)
            out_path = os.path.join(self.scratch, "run.out")
            with open(out_path, "wb") as out:
                host = subprocess.Popen([self.reindex] + args, env=self.env, cwd=self.scratch, stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=subprocess.STDOUT)
                t0 = time.monotonic()
                while host.poll() is None and time.monotonic() - t0 < delay:
                    time.sleep(min(0.002, max(0, delay - (time.monotonic() - t0))))
                if host.poll() is None:
                    host.send_signal(signal.SIGKILL)
                status = host.wait()
            elapsed = time.monotonic() - t0
            self.spent["runs"] += elapsed
            old_gen = next(iter(old.values()), None)
            label = "%s %s" % (bundle.identifier, "reindexAll" if kind == "all" else "reindexItems(%d)" % len(identifiers))
            if status != -signal.SIGKILL:
                # It finished before the moment came: not a kill. It must have succeeded.
                self.counts["completed"] += 1
                with open(out_path, "rb") as f:
                    output = f.read().decode("utf-8", "replace").strip()
                if status != 0:
                    self.fail("lost", "%s ended by itself with status %d: %s" % (label, status, output))
                elif not chain:
                    self.record_duration(bundle, kind, elapsed, count=len(identifiers) if identifiers else None)
                self.check_no_extension_left(label)
                self.check_integrity(label, full=False)
                problem = self.check_visible_exact(bundle, new, label)
                if problem:
                    self.fail("mixed", "%s completed but the new set is not what is visible: %s" % (label, problem))
                bundle.model = new
                chain = None
                if self.o.verbose:
                    log("       %s finished by itself after %.3f s (drawn %.3f s)" % (label, elapsed, delay))
                continue

            self.counts["kills"] += 1
            self.counts[kind] += 1
            number = self.counts["kills"]
            where = "kill %d (%s at %.3f s)" % (number, label, elapsed)
            self.check_no_extension_left(where)
            self.check_integrity(where)

            after = self.requests(bundle)
            fresh = [r for rid, r in after.items() if rid not in before]
            if chain:
                # The takeover records itself by counting an attempt (markRunning); putting the
                # abandoned request back to pending first changes nothing that matters here.
                request = after.get(chain[1])
                changed = request is not None and (request["attempts"] != before[chain[1]]["attempts"] or request["state"] == "done")
            else:
                request = fresh[-1] if fresh else None
                changed = request is not None
            if len(fresh) > (0 if chain else 1):
                self.fail("lost", "%s: %d new request rows for one run: %s" % (where, len(fresh), fresh))

            if request is None and chain:
                self.fail("lost", "%s: the pending request %d being taken over vanished" % (where, chain[1]))
                phase = "lost"
            elif not changed:
                phase = "before"
            elif request["state"] == "done":
                phase = "acknowledged"
            elif request["state"] in ("pending", "running"):
                phase = "recorded"
            else:
                phase = "lost"
                self.fail("lost", "%s: request %d is %s after the kill" % (where, request["id"], request["state"]))

            visible = self.visible_sql(bundle)
            verdict = self.classify(bundle, visible, old, new, identifiers, gen, phase == "acknowledged")
            if verdict is None:
                self.fail("mixed", "%s (%s): visible items are neither the old nor the new set: vs old %s; vs new %s" % (
                    where, phase, describe_difference(visible, old), describe_difference(visible, new)))
            elif verdict.startswith("partial"):
                self.counts["partial"] += 1
            self.check_views(bundle, visible, where, old_gen, gen)

            pending, failed, _ = self.status_pending(bundle)
            note = ""
            if phase == "before":
                self.counts["before"] += 1
                expected_pending = 1 if chain else 0
                if pending != expected_pending:
                    self.fail("lost", "%s: landed before the request was recorded, but status shows %d queued (expected %d)" % (
                        where, pending, expected_pending))
            elif phase == "acknowledged":
                self.counts["after"] += 1
                if pending != 0:
                    self.fail("lost", "%s: acknowledged, but status shows %d queued" % (where, pending))
            elif phase == "recorded":
                self.counts["recorded"] += 1
                if pending < 1:
                    self.fail("lost", "%s: request %d (%s) is not shown queued by status (pending %d)" % (
                        where, request["id"], request["state"], pending))
                if failed:
                    self.fail("lost", "%s: status shows %d failed request(s)" % (where, failed))
            kept_next = 0
            if kind == "all" and request is not None and request["state"] in ("pending", "running"):
                # Recorded, or a takeover killed before it counted its attempt: the batches
                # committed so far (by this attempt or an earlier one) are kept, invisible.
                kept = self.kept_generation(bundle, request["id"])
                state = request["client_state"]
                if state:
                    text = base64.b64decode(state).decode("ascii")
                    kept_next = int(text[5:]) if text.startswith("next=") else 0
                expected_kept = {uid: g for uid, g in new.items() if int(uid[5:]) < kept_next}
                if kept != expected_kept:
                    self.fail("lost", "%s: the kept generation of request %d does not hold exactly the committed batches "
                                      "(client state next=%d): %s" % (where, request["id"], kept_next, describe_difference(kept, expected_kept)))
                note = ", kept %d committed" % len(kept) if kept_next else ""

            summary = "[%3d/%d] %s at %.3f s of %.3f s: %s%s; visible %s" % (
                number, self.o.kills, label, elapsed, window,
                {"before": "before the request was recorded", "recorded": "request %s %s (attempt %s)" % (
                    request and request["id"], request and request["state"], request and request["attempts"]),
                 "acknowledged": "after the acknowledgement", "lost": "request lost"}[phase], note, verdict or "MIXED")

            # What next: nothing to finish, another kill of the same takeover, or the restart.
            if phase == "acknowledged":
                bundle.model = new
                chain = None
                log(summary)
                continue
            if phase == "before" and not chain:
                # Nothing was recorded: the old set stays; no restart is owed.
                chain = None
                log(summary)
                continue
            if phase == "lost":
                bundle.model = visible
                chain = None
                log(summary)
                continue
            request_id = request["id"]
            if kind == "all" and links < 2 and self.rng.random() < 1 / 3:
                self.counts["chained"] += 1
                chain = (bundle, request_id, old, new, gen, links + 1)
                log(summary + "; killing its takeover next")
                continue
            chain = None
            restart_started = time.monotonic()
            restart = self.restart(bundle, kind, request_id, kept_next, new, where)
            self.spent["restarts"] += time.monotonic() - restart_started
            log(summary + "; " + restart)
            bundle.model = new

        elapsed = time.monotonic() - started
        c = self.counts
        log("details: %d runs finished before their kill moment (not counted), %d takeovers killed again, "
            "%d reindexItems kills left committed batches visible (allowed), %d restarts resumed from a saved client state" % (
                c["completed"], c["chained"], c["partial"], c["resumed"]))
        log("details: %.0f s: %.0f s in killed and completed runs, %.0f s in restarts, %.0f s checking" % (
            elapsed, self.spent["runs"], self.spent["restarts"], elapsed - self.spent["runs"] - self.spent["restarts"]))
        log("crash-consistency: %d kills (%d during reindexAll, %d during reindexItems), %d integrity failures, "
            "%d mixed generations, %d requests lost, %d extensions left running" % (
                c["kills"], c["all"], c["items"], c["integrity"], c["mixed"], c["lost"], c["left"]))
        log("crash-consistency: %d kills landed before the request was recorded, %d after the acknowledgement" % (
            c["before"], c["after"]))
        return not self.failures

    def restart(self, bundle, kind, request_id, kept_next, new, where):
        """Runs the host again until the interrupted request is done; checks the result."""
        self.counts["restarts"] += 1
        offset = self.log_size(bundle)
        use_serve = kind == "items" or self.rng.random() < 0.5
        started = time.monotonic()
        if use_serve:
            how = self.serve_until_drained(bundle, request_id, where)
        else:
            how = "run"
            # As serve's retry would: a forced run only resumes when asked to.
            status, out, err = self.host("run", bundle.identifier, "--resume", "--json", check=False)
            if status != 0:
                self.fail("lost", "%s: restart 'reindex run' failed with status %d: %s %s" % (where, status, out.strip(), err.strip()))
            else:
                reply = json.loads(out)
                if reply.get("requestId") != request_id:
                    self.fail("lost", "%s: 'reindex run' ran request %s instead of taking over %d" % (where, reply.get("requestId"), request_id))
        took = time.monotonic() - started
        if how == "run" and not kept_next:
            self.record_duration(bundle, kind, took)  # a takeover with nothing committed is a full run
        self.check_no_extension_left(where + " restart")
        self.check_integrity(where + " after the restart", full=False)
        request = self.requests(bundle).get(request_id)
        if request is None or request["state"] != "done":
            self.fail("lost", "%s: after the restart request %d is %s" % (where, request_id, request and request["state"]))
        left = self.open_requests()
        if left:
            self.fail("lost", "%s: after the restart requests are still open: %s" % (where, left))
        problem = self.check_visible_exact(bundle, new, where)
        if problem:
            self.fail("lost", "%s: after the restart the new set is not complete: %s" % (where, problem))
        resumed = ""
        if kind == "all":
            starts = [int(line.rsplit(" start ", 1)[1].split()[0]) for line in self.log_since(bundle, offset).splitlines()
                      if "crashloop: reindexAll request" in line and " start " in line]
            if not starts:
                self.fail("lost", "%s: the restart's extension log shows no reindexAll" % where)
            elif starts[0] != kept_next:
                self.fail("lost", "%s: the restart resumed at %d, but the committed client state was next=%d" % (where, starts[0], kept_next))
            elif kept_next:
                self.counts["resumed"] += 1
                resumed = ", resumed at %d" % kept_next
        return "restart via %s %.2f s%s: new set complete" % (how, took, resumed)

    def serve_until_drained(self, bundle, request_id, where):
        err_path = os.path.join(self.scratch, "serve.err")
        with open(err_path, "wb") as err:
            serve = subprocess.Popen([self.reindex, "serve", "--rescan", "3600"], env=self.env, cwd=self.scratch,
                                     stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT)
            deadline = time.monotonic() + 300
            done = False
            while time.monotonic() < deadline and serve.poll() is None:
                try:
                    request = self.requests(bundle).get(request_id)
                    if request and request["state"] == "done" and not self.open_requests():
                        done = True
                        break
                except sqlite3.Error:
                    pass
                time.sleep(0.03)
            if serve.poll() is None:
                serve.send_signal(signal.SIGTERM)
            try:
                status = serve.wait(timeout=60)
            except subprocess.TimeoutExpired:
                serve.kill()
                status = serve.wait()
        if not done or status != 0:
            with open(err_path, "rb") as f:
                tail = f.read().decode("utf-8", "replace")[-2000:]
            self.fail("lost", "%s: 'reindex serve' did not finish request %d (exit %s): %s" % (where, request_id, status, tail))
        return "serve"


def stamp_number(stamp):
    if isinstance(stamp, str) and stamp.startswith("g") and stamp.endswith("z"):
        try:
            return int(stamp[1:-1])
        except ValueError:
            pass
    return stamp


def describe_difference(actual, expected):
    missing = [k for k in expected if k not in actual]
    extra = [k for k in actual if k not in expected]
    wrong = [k for k in expected if k in actual and actual[k] != expected[k]]
    parts = ["%d visible, %d expected" % (len(actual), len(expected))]
    if missing:
        parts.append("%d missing (%s…)" % (len(missing), ", ".join(sorted(missing)[:3])))
    if extra:
        parts.append("%d extra (%s…)" % (len(extra), ", ".join(sorted(extra)[:3])))
    if wrong:
        generations = {}
        for k in wrong:
            generations[(actual[k], expected[k])] = generations.get((actual[k], expected[k]), 0) + 1
        parts.append("%d of another generation (%s)" % (len(wrong), ", ".join(
            "%d g%sz where g%sz" % (n, a, e) for (a, e), n in sorted(generations.items(), key=str)[:3])))
    return "; ".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs to deliver (default 200)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock; printed)")
    parser.add_argument("--reindex", default=os.path.join(REPO, ".build", "release", "reindex"),
                        help="the reindex executable (default .build/release/reindex)")
    parser.add_argument("--items", type=int, default=20000, help="items per bundle (default 20000)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--verbose", action="store_true", help="also report runs that finished before their kill")
    options = parser.parse_args()
    if options.seed is None:
        options.seed = int(time.time() * 1000) % 1_000_000
    loop = Loop(options)
    ok = False
    try:
        ok = loop.run()
    finally:
        kill_all(loop.extension_processes())
        if ok and not options.keep:
            shutil.rmtree(loop.scratch, ignore_errors=True)
        else:
            log("scratch directory kept: %s" % loop.scratch)
    if not ok:
        for failure in loop.failures[:10]:
            log("crash-consistency: FAILED: " + failure)
        if len(loop.failures) > 10:
            log("crash-consistency: FAILED: … and %d more (see above)" % (len(loop.failures) - 10))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
