#!/usr/bin/env python3
"""An extension for the SDK's tests, written with the SDK (found through $REINDEX_PYTHON_SDK).

`reindex_all` does what the first argument says (the manifest's "arguments"):
  catalogue  puts three birds and acknowledges (the default)
  resume     without a client state: puts resume.1 and resume.2, commits the state b"next=3"
             and refuses; with one: logs it, puts resume.3 and resume.4 and acknowledges
  spin       reports progress every 20 ms until the host cancels the request
  print      writes to stdout every way it can (print before the SDK starts and in the
             handler, a write to descriptor 1, a child process), then puts one item
  print-early  as print, and also prints (flushed) and writes to descriptor 1 at the top level
             after importing the SDK and in the extension's __init__, before run() starts
  empty      puts three birds and writes a marker in $REINDEX_DATA_DIR; once the marker is
             there, puts nothing and calls index.allow_empty()
  empty-by-mistake  the same without allow_empty()
  refuse     refuses with RequestError("catalogue database unreachable")
  crash      raises ValueError("the catalogue is corrupt")

`reindex_items` runs its identifiers as commands, in order (see `command`). Log lines start
with "scripted:". $SCRIPTED_NAME and $SCRIPTED_VERSION override the reported name/version,
$SCRIPTED_DEBUGPY_PORT the port of the debugger gate's debugpy.
"""
import os
import subprocess
import sys
import threading
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "catalogue"
if MODE in ("print", "print-early"):
    print("stray output before the SDK starts")  # still in print's buffer when run() starts

sys.path.insert(0, os.environ["REINDEX_PYTHON_SDK"])
from reindex_extension import (  # noqa: E402
    Cancelled, ClientStateTooLarge, CommitRefused, Extension, Item, RequestEnded, RequestError)

if MODE == "print-early":
    print("stray print after importing the SDK", flush=True)
    os.write(1, b"stray write to descriptor 1 at the top level\n")


def log(*args):
    print("scripted:", *args, file=sys.stderr, flush=True)


def bird(identifier, title, **attributes):
    return {"uniqueIdentifier": identifier, "domainIdentifier": "com.example.birds",
            "attributes": dict(title=title, **attributes)}


class Scripted(Extension):
    extension_name = os.environ.get("SCRIPTED_NAME")
    extension_version = os.environ.get("SCRIPTED_VERSION")
    if os.environ.get("SCRIPTED_DEBUGPY_PORT"):
        debugpy_address = ("127.0.0.1", int(os.environ["SCRIPTED_DEBUGPY_PORT"]))

    def __init__(self):
        self.stashed = None
        self.late = None
        if MODE == "print-early":
            print("stray print in __init__", flush=True)

    def reindex_all(self, index):
        log("reindexAll mode=%s reason=%s clientState=%r" % (MODE, index.reason, index.client_state))
        if MODE == "catalogue":
            index.put([bird("bird.1", "Osprey Notes", keywords=["raptor"]),
                       Item("bird.2", {"title": "Kestrel Notes", "keywords": ["raptor"]}, domain_identifier="com.example.birds"),
                       bird("bird.3", "Heron Notes")])
        elif MODE == "resume":
            if index.client_state is None:
                index.put([bird("resume.1", "Resumable Osprey"), bird("resume.2", "Resumable Kestrel")])
                log("first batch committed:", index.commit_batch(b"next=3"))
                raise RequestError("stopping after the first batch")
            log("resuming from client state %s" % index.client_state.decode())
            index.put([bird("resume.3", "Resumable Harrier"), bird("resume.4", "Resumable Merlin")])
        elif MODE == "spin":
            self.spin(index)
        elif MODE in ("print", "print-early"):
            print("stray print in the handler")
            os.write(1, b"stray write to descriptor 1\n")
            subprocess.run(["sh", "-c", "echo stray output of a child process"], check=True)
            sys.stdout.write("stray sys.stdout.write\n")
            index.put([bird("print.1", "Printed Puffin")])
        elif MODE in ("empty", "empty-by-mistake"):
            marker = os.path.join(os.environ.get("REINDEX_DATA_DIR") or os.getcwd(), "scripted-ran-once")
            if os.path.exists(marker):
                log("%s: putting nothing" % MODE)
                if MODE == "empty":
                    index.allow_empty()
            else:
                index.put([bird("bird.1", "Osprey Notes"), bird("bird.2", "Kestrel Notes")])
                with open(marker, "w"):
                    pass
        elif MODE in ("thread", "daemon-thread"):
            # The early acknowledgement: the work goes on in a thread the handler does not join.
            def work():
                index.put([bird("thread.1", "Threaded Teal")])
                time.sleep(0.3)
                try:
                    index.put([bird("thread.2", "Threaded Tern")])
                except Exception as error:  # RequestEnded, once the request was answered
                    log("thread: %s" % type(error).__name__)
            threading.Thread(target=work, daemon=MODE == "daemon-thread").start()
            time.sleep(0.05)
        elif MODE == "refuse":
            raise RequestError("catalogue database unreachable")
        elif MODE == "crash":
            raise ValueError("the catalogue is corrupt")
        else:
            raise RequestError("unknown mode %r" % MODE)

    @staticmethod
    def spin(index):
        log("spinning on request %r" % (index.request_id,))
        step = 0
        try:
            while True:
                index.progress(step, message="step %d" % step)
                step += 1
                time.sleep(0.02)
        except Cancelled:
            log("spin: cancelled after %d steps" % step)
            raise

    def reindex_items(self, identifiers, index):
        for command in identifiers:
            self.command(command, index)

    def command(self, command, index):
        name, _, argument = command.partition(":")
        if name == "put":
            identifier, _, title = argument.partition(":")
            index.put(bird(identifier, title or identifier))
        elif name == "putmany":
            index.put(bird("many.%d" % n, "Many %d" % n) for n in range(int(argument)))
        elif name == "dates":
            import datetime
            index.put(Item("dated.1", {"title": "Dated", "startDate": datetime.datetime(2026, 3, 1, 9, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
                                       "thumbnailData": b"\x89PNG", "endDate": datetime.date(2026, 3, 2)},
                           expiration_date=datetime.datetime(2027, 1, 1), is_update=True))
        elif name == "delete":
            index.delete(argument)
        elif name == "domains":
            index.delete_domains([argument])
        elif name == "deleteAll":
            index.delete_all()
        elif name == "commit":
            log("committed %d" % index.commit_batch(argument.encode()))
        elif name == "commit-none":
            log("committed %d" % index.commit_batch())
        elif name == "bigstate":
            try:
                index.commit_batch(b"s" * int(argument or "251"))
                log("bigstate: committed")
            except ClientStateTooLarge as error:
                log("bigstate: %s" % error)
        elif name == "commit-refused":
            try:
                index.commit_batch(b"r")
            except CommitRefused as error:
                log("commit refused: %s (code %d)" % (error, error.code))
        elif name == "commit-wait":
            try:
                index.commit_batch(b"w")
            except Cancelled:
                log("commit-wait: cancelled")
                raise
        elif name == "progress":
            index.progress(int(argument), 10, "step %s" % argument)
        elif name == "refuse":
            raise RequestError(argument, code=-32001, data={"why": argument})
        elif name == "crash":
            raise RuntimeError(argument)
        elif name == "print":
            print(argument)
        elif name == "fd1":
            os.write(1, argument.encode() + b"\n")
        elif name == "child":
            subprocess.run(["sh", "-c", 'echo "$0"', argument], check=True)
        elif name == "input":
            try:
                line = input()
                log("input read %r" % line)
            except EOFError:
                log("input: end of file")
        elif name == "spin":
            self.spin(index)
        elif name == "spin-quiet":
            log("waiting quietly")
            while not index.cancelled:
                time.sleep(0.01)
            log("noticed the cancel")
        elif name == "commit-after-cancel":
            while not index.cancelled:
                time.sleep(0.01)
            try:
                index.put(bird("late.1", "Late"))
            except Cancelled:
                log("put after cancel: Cancelled")
        elif name == "stash":
            self.stashed = index
        elif name == "stale":
            try:
                self.stashed.put(bird("stale.1", "Stale"))
                log("stale: sent")
            except RequestEnded as error:
                log("stale: %s" % error)
        elif name == "allow-empty":
            index.allow_empty()
        elif name == "late":
            # A thread that outlives the handler, then uses the index (released by "release").
            import threading
            released = threading.Event()

            def late():
                released.wait()
                try:
                    self.late_call(argument, index)
                    log("late %s: sent" % argument)
                except RequestEnded as error:
                    log("late %s: RequestEnded: %s" % (argument, error))

            # A daemon: the SDK refuses a request whose handler leaves a non-daemon thread
            # running, and this one is about what a thread sends after the answer.
            thread = threading.Thread(target=late, daemon=True)
            thread.start()
            self.late = (released, thread)
        elif name == "release":
            released, thread = self.late
            released.set()
            thread.join(10)
        elif name == "info":
            log("info: reason=%s method=%s request=%r host=%r" % (index.reason, index.method, index.request_id, self.host))
        elif name == "sleep":
            time.sleep(float(argument))
        elif "." in command and not argument:
            # An identifier, not a command (the conformance suite's reindexItems): re-index it.
            index.put(bird(command, command))
        else:
            raise RequestError("unknown command %r" % command)

    @staticmethod
    def late_call(operation, index):
        if operation == "put":
            index.put(bird("late.1", "Late"))
        elif operation == "delete":
            index.delete("bird.1")
        elif operation == "delete_domains":
            index.delete_domains("com.example.birds")
        elif operation == "delete_all":
            index.delete_all()
        elif operation == "progress":
            index.progress(1, 2)
        elif operation == "commit_batch":
            index.commit_batch(b"late")
        elif operation == "allow_empty":
            index.allow_empty()
        else:
            raise ValueError(operation)

    def shutdown(self):
        log("shutdown")


if __name__ == "__main__":
    Scripted.main()
