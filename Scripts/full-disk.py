#!/usr/bin/env python3
"""Full disk: a run that cannot write the index fails with a clear error and loses nothing that
was committed; once there is room again, the request finishes.

    swift build -c release --product reindex
    python3 Scripts/full-disk.py [--reindex .build/release/reindex] [--mode auto|tmpfs|fsize]
                                 [--size-mb 64] [--full-seconds 2] [--keep]

Standard library only. The index lives on a file system of its own:

  tmpfs  (default when it works; needs root) a tmpfs of --size-mb MiB mounted in the scratch
         directory: writes fail with ENOSPC, which SQLite reports as SQLITE_FULL ("database or
         disk is full"). Unmounted at the end.
  fsize  (the fallback) the host runs under RLIMIT_FSIZE (`ulimit -f`) with SIGXFSZ ignored:
         writes past the limit fail with EFBIG, which SQLite reports as a disk I/O error
         (SQLITE_IOERR_WRITE). Without ignoring SIGXFSZ the kernel kills the host outright.

Steps, with the extension Tests/Fixtures/extensions/crashloop_indexer.py (commits every 1,000
items with a client state, stamps every item with its generation g<N>z):

  1. reindexAll of 5,000 items, generation 1: committed and visible;
  2. fill the file system, leaving ~1.5 MiB (tmpfs; in fsize mode the limit is the index's size
     plus that), and run a reindexAll of 30,000 items, generation 2. Expected: a non-zero exit and
     an `error:` line naming the bundle and the full disk. Then: no extension left running;
     PRAGMA integrity_check (read-only connection), the items/full-text cross-checks and
     `reindex check` pass; the 5,000 committed items of generation 1 are exactly what is
     visible (SQL, `reindex items`, `reindex search g1z`), none of generation 2 is; the request is
     still queued (`reindex status --json`);
  3. with room again (filler removed / no limit), `reindex run` takes the request over and
     resumes it from its last committed client state: all 30,000 items of generation 2 are
     visible and the index is intact;
  4. (tmpfs; --no-serve leaves it out) serve and a disk that fills up under a running request:
     `reindex run --queue` a reindexAll of generation 3 and start `reindex serve --retry-base 1`;
     after the first committed batch the extension holds (crashloop-pause "hold-all-commit-1")
     while the filler takes every free byte, then goes on, so the next commit fails; 2 s later
     the filler goes (--full-seconds). serve should retry the request and finish it within 30 s
     of the disk having room. When even a failure could not be recorded, serve says so with the
     wait before its next try; those waits must never shrink while the disk stays full (they
     double, from --retry-base). Whatever serve did, a `reindex run` afterwards must finish it
     with generation 3 complete and the index intact.

Progress goes to stdout; at the end (exit status 1 when any check fails) comes the one line
  full-disk: <the error line without "error: ">; committed items intact: yes|no; integrity: ok|FAILED
followed by one `full-disk: FAILED: …` line per failed check.
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import resource

from crashlib import (FIXTURE, REPO, extension_processes, extensions_left, host_environment, index_problems, kill_all, log,
                      read_only, run_host)

BUNDLE = "com.crashloop.fulldisk"
OLD_ITEMS = 5000
NEW_ITEMS = 30000
HEADROOM = 1536 * 1024


class FullDisk:
    def __init__(self, options):
        self.o = options
        self.reindex = os.path.abspath(options.reindex)
        self.scratch = tempfile.mkdtemp(prefix="fulldisk-", dir=os.environ.get("TMPDIR") or "/tmp")
        self.mount = os.path.join(self.scratch, "disk")
        self.index = os.path.join(self.mount, "index.sqlite")
        self.extensions = os.path.join(self.scratch, "extensions")
        self.bundle_dir = os.path.join(self.extensions, BUNDLE)
        self.filler = os.path.join(self.mount, "filler")
        self.token = "fulldisk-%d-%d" % (os.getpid(), int(time.time()))
        self.mounted = False
        self.fsize_blocks = None
        self.failures = []
        self.env = host_environment(self.scratch, self.index, self.extensions)

    def fail(self, text):
        self.failures.append(text)
        log("  FAIL: " + text)

    # MARK: Plumbing

    def limited(self):
        """In fsize mode, the child gets the file-size limit and ignores SIGXFSZ."""
        blocks = self.fsize_blocks
        if blocks is None:
            return None

        def apply():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (blocks * 512, blocks * 512))
        return apply

    def host(self, *args, limit=False, timeout=300):
        return run_host(self.reindex, self.env, self.scratch, args, timeout=timeout, preexec_fn=self.limited() if limit else None)

    def db(self):
        """A read-only connection, closed when the `with` block ends."""
        return read_only(self.index)

    def configure(self, items, generation):
        manifest = {
            "manifestVersion": 1, "bundleIdentifier": BUNDLE, "version": "1", "executable": "crashloop_indexer.py",
            "arguments": ["--items", str(items), "--commit-every", "1000"],
            "environment": {"CRASHLOOP_TOKEN": self.token}, "retry": {"maxAttempts": 100},
        }
        with open(os.path.join(self.bundle_dir, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        os.chmod(os.path.join(self.bundle_dir, "manifest.json"), 0o644)
        with open(os.path.join(self.bundle_dir, "crashloop-generation"), "w") as f:
            f.write("%d\n" % generation)

    def free_bytes(self):
        st = os.statvfs(self.mount)
        return st.f_bavail * st.f_frsize

    def extension_processes(self):
        return extension_processes(self.token)

    def check_no_extension_left(self, where):
        alive = extensions_left(self.token, 5)
        if alive:
            self.fail("%s: extension process(es) %s still running 5 s after the host ended" % (where, alive))
            kill_all(alive)

    # MARK: Checks

    def integrity(self, where):
        problems = index_problems(self.index, self.host)
        if problems:
            self.fail("%s: integrity: %s" % (where, "; ".join(problems)))
            return False
        return True

    def visible(self):
        with self.db() as db:
            rows = db.execute("SELECT i.uid, json_extract(i.attributes, '$.keywords[0]') FROM items i "
                              "JOIN bundles b ON b.key = i.bundle AND b.live_gen = i.gen WHERE i.bundle = ?", (BUNDLE,)).fetchall()
        return dict(rows)

    def check_visible(self, expected_count, generation, other, where):
        expected = {"item.%d" % n: "g%dz" % generation for n in range(expected_count)}
        live = self.visible()
        ok = live == expected
        if not ok:
            self.fail("%s: visible %d items (%s), expected the %d items of g%dz" % (
                where, len(live), sorted(set(live.values()))[:5], expected_count, generation))
        status, out, err = self.host("items", BUNDLE, "--json", "--limit", str(NEW_ITEMS * 2))
        listed = {r["uniqueIdentifier"]: (r["attributes"].get("keywords") or [None])[0] for r in json.loads(out)["results"]} if status == 0 else None
        if listed != live:
            ok = False
            self.fail("%s: reindex items (exit %d) does not show the live rows: %s" % (where, status, err.strip()))
        for gen, expect in ((generation, True), (other, False)):
            status, out, err = self.host("search", "g%dz" % gen, "--limit", "3", "--json")
            found = len(json.loads(out)["results"]) if status == 0 else -1
            if (found > 0) != expect:
                ok = False
                self.fail("%s: reindex search g%dz found %d item(s) (exit %d %s)" % (where, gen, found, status, err.strip()))
        return ok

    def request(self):
        with self.db() as db:
            return db.execute("SELECT id, state, attempts, client_state, last_error FROM requests "
                              "WHERE bundle = ? ORDER BY id DESC LIMIT 1", (BUNDLE,)).fetchone()

    def queued(self):
        status, out, _ = self.host("status", "--json")
        if status != 0:
            return -1
        for entry in json.loads(out)["bundles"]:
            if entry["bundleIdentifier"].lower() == BUNDLE:
                return entry["pending"]
        return 0

    # MARK: Steps

    def setup(self):
        if not os.access(self.reindex, os.X_OK):
            sys.exit("full-disk: %s is not an executable; build it with 'swift build -c release --product reindex' "
                     "or pass --reindex PATH" % self.reindex)
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: reap orphaned extensions
        except Exception:
            pass
        os.makedirs(self.mount)
        os.makedirs(self.bundle_dir)
        target = os.path.join(self.bundle_dir, "crashloop_indexer.py")
        shutil.copyfile(FIXTURE, target)
        os.chmod(target, 0o755)
        mode = self.o.mode
        if mode in ("auto", "tmpfs"):
            done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0755" % self.o.size_mb, "tmpfs", self.mount],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if done.returncode == 0:
                self.mounted = True
                mode = "tmpfs"
            elif mode == "tmpfs":
                sys.exit("full-disk: cannot mount a tmpfs: %s" % done.stdout.decode().strip())
            else:
                log("cannot mount a tmpfs (%s); using RLIMIT_FSIZE instead" % done.stdout.decode().strip())
                mode = "fsize"
        self.mode = mode
        log("mode %s, scratch %s" % (mode, self.scratch))

    def fill(self, leave):
        """Fills the file system with the filler file until only `leave` bytes are free (0: until
        the file system refuses a single byte more)."""
        try:
            fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError:
            return  # not even room for the file: full already
        try:
            for size in (1 << 20, 4096, 512):
                chunk = b"\0" * size
                try:
                    while self.free_bytes() - leave >= size:
                        os.write(fd, chunk)
                    while leave == 0:
                        os.write(fd, chunk)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def log_text(self):
        try:
            with open(os.path.join(self.mount, "logs", BUNDLE + ".log"), "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def run(self):
        self.setup()
        # 1. The committed old set.
        self.configure(OLD_ITEMS, 1)
        status, out, err = self.host("run", BUNDLE, "--json")
        if status != 0:
            raise RuntimeError("the first run failed: %d %s %s" % (status, out, err))
        self.check_visible(OLD_ITEMS, 1, 2, "after the first run")

        # 2. Fill the disk and run a much larger reindexAll.
        self.configure(NEW_ITEMS, 2)
        if self.mode == "tmpfs":
            self.fill(HEADROOM)
            log("filled %s, %d KiB left" % (self.mount, self.free_bytes() // 1024))
        else:
            used = sum(os.path.getsize(os.path.join(self.mount, n)) for n in os.listdir(self.mount)
                       if os.path.isfile(os.path.join(self.mount, n)))
            self.fsize_blocks = (used + HEADROOM) // 512
            log("RLIMIT_FSIZE %d bytes for the next run" % (self.fsize_blocks * 512))
        status, out, err = self.host("run", BUNDLE, "--json", limit=True)
        self.fsize_blocks = None
        error_line = next((line for line in err.splitlines() if line.startswith("error:")), "")
        log("the run exited with status %d; stderr:\n%s" % (status, "\n".join("  | " + l for l in err.strip().splitlines())))
        self.message = error_line
        if status == 0:
            self.fail("the run on a full disk succeeded (the disk was not full enough?)")
        elif status < 0:
            self.fail("the host was killed by signal %d on a full disk" % -status)
        words = ("disk is full",) if self.mode == "tmpfs" else ("disk I/O error", "too large", "file size")
        if not error_line or BUNDLE not in error_line or not any(w in error_line for w in words):
            self.fail("the error does not name the bundle and the full disk: %r" % error_line)
        self.check_no_extension_left("the failed run")
        self.integrity_ok = self.integrity("on the full disk")
        self.intact = self.check_visible(OLD_ITEMS, 1, 2, "on the full disk")
        request = self.request()
        queued = self.queued()
        state = request[3]
        kept_next = int(base64.b64decode(state).decode()[5:]) if state else 0
        log("request %s is %s after %s attempt(s), client state next=%d; status shows %d queued" % (
            request[0], request[1], request[2], kept_next, queued))
        if request[1] not in ("pending", "running") or queued < 1:
            self.fail("the request is not queued after the failure: %s, status %d" % (request, queued))

        # 3. Room again: the next run takes the request over and resumes from its client state.
        if os.path.exists(self.filler):
            os.remove(self.filler)
        log_offset = len(self.log_text())
        status, out, err = self.host("run", BUNDLE, "--resume", "--json")
        if status != 0:
            self.fail("the run after freeing space failed: %d %s %s" % (status, out.strip(), err.strip()))
            self.after = "run failed (exit %d)" % status
        else:
            reply = json.loads(out)
            starts = [line for line in self.log_text()[log_offset:].splitlines() if "crashloop: reindexAll request" in line]
            resumed = starts and (" start %d of" % kept_next) in starts[0]
            if reply.get("requestId") != request[0] or not resumed:
                self.fail("the run after freeing space did not resume request %d from next=%d: ran request %s, %s" % (
                    request[0], kept_next, reply.get("requestId"), starts[:1]))
            self.after = "reindex run took request %s over and resumed from next=%d (put %s)" % (
                reply.get("requestId"), kept_next, reply.get("put"))
        self.check_no_extension_left("the run after freeing space")
        complete = self.check_visible(NEW_ITEMS, 2, 1, "after freeing space")
        after_integrity = self.integrity("after freeing space")
        request = self.request()
        if request[1] != "done" or self.queued() != 0:
            self.fail("after freeing space the request is %s" % (request,))
        if complete and after_integrity:
            self.after += ": all %d items of generation 2 visible, integrity ok" % NEW_ITEMS

        # 4. serve on a disk that fills up under a running request, then has room again.
        self.serve_result = "not checked (needs a tmpfs)"
        if self.mode == "tmpfs" and not self.o.no_serve:
            self.serve_result = self.serve_check()

        excerpt = self.message[len("error: "):] if self.message.startswith("error: ") else self.message
        log("full-disk: %s; committed items intact: %s; integrity: %s" % (
            excerpt or "(no error line)", "yes" if self.intact else "no", "ok" if self.integrity_ok else "FAILED"))
        log("after freeing space: %s" % self.after)
        log("serve: %s" % self.serve_result)
        return not self.failures

    def serve_check(self):
        """serve runs a reindexAll (generation 3); after its first committed batch the extension
        holds while the disk is filled completely, then goes on: the next commit fails. The filler
        goes --full-seconds later. serve should retry the request (--retry-base 1) and finish it."""
        self.configure(NEW_ITEMS, 3)
        pause = os.path.join(self.bundle_dir, "crashloop-pause")
        with open(pause, "w") as f:
            f.write("hold-all-commit-1\n")
        status, out, err = self.host("run", BUNDLE, "--queue", "--json")
        request_id = json.loads(out)["requestId"] if status == 0 else None
        err_path = os.path.join(self.scratch, "serve.log")
        with open(err_path, "wb") as err_file:
            serve = subprocess.Popen([self.reindex, "serve", "--retry-base", "1", "--rescan", "1"], env=self.env, cwd=self.scratch,
                                     stdin=subprocess.DEVNULL, stdout=err_file, stderr=subprocess.STDOUT)

            def serve_log():
                with open(err_path, "rb") as f:
                    return f.read().decode("utf-8", "replace")

            def wait_for(predicate, seconds):
                end = time.monotonic() + seconds
                while time.monotonic() < end and serve.poll() is None:
                    if predicate():
                        return True
                    time.sleep(0.05)
                return False

            try:
                outcome = self.serve_steps(serve, serve_log, wait_for, pause, request_id)
            finally:
                if serve.poll() is None:
                    serve.send_signal(signal.SIGTERM)
                try:
                    serve.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    serve.kill()
                    serve.wait()
        if os.path.exists(pause):
            os.remove(pause)
        if os.path.exists(self.filler):
            os.remove(self.filler)
        self.check_no_extension_left("serve")
        # Whatever serve did, the next host run finishes the request.
        row = self.request()
        if row[1] != "done":
            status, out, err = self.host("run", BUNDLE, "--json")
            if status != 0:
                self.fail("reindex run after serve failed: %d %s %s" % (status, out.strip(), err.strip()))
            else:
                outcome += "\n  then 'reindex run' finished it (request %s)" % json.loads(out).get("requestId")
            self.check_no_extension_left("the run after serve")
        self.check_visible(NEW_ITEMS, 3, 2, "after serve")
        self.integrity("after serve")
        return outcome

    def serve_steps(self, serve, serve_log, wait_for, pause, request_id):
        if not wait_for(lambda: "holding at all-commit-1" in self.log_text(), 60):
            return "the extension never reached its first commit under serve"
        self.fill(0)
        log("serve's request %s holds after its first commit; disk filled (%d bytes free)" % (request_id, self.free_bytes()))
        os.remove(pause)
        outcome = None
        if not wait_for(lambda: "storeFailure" in serve_log() or "disk is full" in serve_log(), 60):
            outcome = "serve reported no failure on the full disk"
        time.sleep(self.o.full_seconds)
        os.remove(self.filler)
        freed = time.monotonic()
        log("filler removed, %d KiB free; waiting up to 30 s for serve to finish request %s" % (
            self.free_bytes() // 1024, request_id))
        done = wait_for(lambda: (self.request() or (None, None))[1] == "done", 30)
        waited = time.monotonic() - freed
        row = self.request()
        waits = [int(w) for w in re.findall(r"could not be recorded.*next try in (\d+) s", serve_log())]
        if any(later < earlier for earlier, later in zip(waits, waits[1:])):
            self.fail("serve's waits after unrecorded failures shrank: %s" % waits)
        unrecorded = ("; %d failure(s) could not be recorded, waits %s s" % (len(waits), ", ".join(map(str, waits)))) if waits else ""
        if done:
            return (outcome or "request %s finished %.1f s after the disk had room again" % (request_id, waited)) + unrecorded
        lines = [l for l in serve_log().splitlines() if BUNDLE in l][-3:]
        self.fail("serve did not retry request %s once the disk had room (left '%s')" % (request_id, row[1]))
        return ("request %s NOT retried: still '%s' after attempt %s, %.0f s after the disk had room again; "
                "serve's last lines:\n%s" % (request_id, row[1], row[2], waited, "\n".join("  | " + l for l in lines)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reindex", default=os.path.join(REPO, ".build", "release", "reindex"),
                        help="the reindex executable (default .build/release/reindex)")
    parser.add_argument("--mode", choices=["auto", "tmpfs", "fsize"], default="auto",
                        help="tmpfs (needs root), fsize (RLIMIT_FSIZE), or auto: tmpfs when it can be mounted")
    parser.add_argument("--size-mb", type=int, default=64, help="tmpfs size in MiB (default 64)")
    parser.add_argument("--no-serve", action="store_true", help="leave out the serve step")
    parser.add_argument("--full-seconds", type=float, default=2,
                        help="how long the disk stays full under serve (default 2)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    options = parser.parse_args()
    check = FullDisk(options)
    ok = False
    try:
        ok = check.run()
    finally:
        kill_all(check.extension_processes())
        if check.mounted:
            if options.keep or not ok:
                keep = os.path.join(check.scratch, "disk-copy")
                shutil.copytree(check.mount, keep, ignore=shutil.ignore_patterns("filler"))
            for attempt in range(20):
                if subprocess.run(["umount", check.mount], stderr=subprocess.DEVNULL).returncode == 0:
                    break
                time.sleep(0.25)
            else:
                subprocess.run(["umount", "-l", check.mount])
        if ok and not options.keep:
            shutil.rmtree(check.scratch, ignore_errors=True)
        else:
            log("scratch directory kept: %s" % check.scratch)
    if not ok:
        for failure in check.failures:
            log("full-disk: FAILED: " + failure)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
