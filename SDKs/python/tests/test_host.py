"""The SDK through the real host: bundles built on tests/extensions/scripted.py, run by `reindex`
($REINDEX_BIN, else the repository's .build/debug/reindex; skipped when there is neither)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
import unittest

from support import HostTestCase


class HostTests(HostTestCase):
    def test_put_then_search(self):
        self.bundle("com.example.test.catalogue", ["catalogue"])
        summary = self.reindex_json("run", "com.example.test.catalogue")
        self.assertEqual((summary["outcome"], summary["put"], summary["rejected"]), ("acknowledged", 3, 0), summary)
        self.assertEqual(self.search("osprey"), ["bird.1"])
        self.assertEqual(self.search("raptor"), ["bird.1", "bird.2"])
        self.assertEqual(self.identifiers("com.example.test.catalogue"), ["bird.1", "bird.2", "bird.3"])
        log = self.log("com.example.test.catalogue")
        self.assertIn("initialized: Test catalogue 2.5.0, protocol 1", log)
        self.assertIn("scripted: shutdown", log)
        self.assertIn("the extension exited with status 0", log)

    def test_a_refusal_after_a_commit_then_the_retry_resumes_from_the_client_state(self):
        self.bundle("com.example.test.resume", ["resume"])
        first = self.reindex("run", "com.example.test.resume")
        self.assertEqual(first.returncode, 75, first)
        self.assertIn("stopping after the first batch (code -32000)", first.stderr)
        self.assertEqual(self.search("resumable"), [], "an unacknowledged reindexAll became visible")

        # A host that starts forced runs fresh needs --resume to hand the client state back.
        help_text = self.reindex("run", "--help").stdout
        resume = ["--resume"] if "--resume" in help_text else []
        second = self.reindex_json("run", "com.example.test.resume", *resume)
        self.assertEqual(second["outcome"], "acknowledged", second)
        log = self.log("com.example.test.resume")
        self.assertIn("scripted: first batch committed: 2", log)
        self.assertIn("scripted: resuming from client state next=3", log)
        self.assertEqual(self.identifiers("com.example.test.resume"), ["resume.1", "resume.2", "resume.3", "resume.4"])
        self.assertEqual(self.search("resumable"), ["resume.1", "resume.2", "resume.3", "resume.4"])

    def test_reindex_items_puts_and_deletes_exactly_those(self):
        self.bundle("com.example.test.items", ["catalogue"])
        self.reindex_json("run", "com.example.test.items")
        summary = self.reindex_json("run", "com.example.test.items", "--ids", "put:bird.9:Gannet Notes,delete:bird.1")
        self.assertEqual((summary["request"], summary["put"], summary["deleted"]), ("reindexItems", 1, 1), summary)
        self.assertEqual(self.identifiers("com.example.test.items"), ["bird.2", "bird.3", "bird.9"])
        self.assertEqual(self.search("gannet"), ["bird.9"])

    def test_a_committed_batch_of_reindex_items_stays_when_the_rest_is_refused(self):
        self.bundle("com.example.test.batches", ["catalogue"])
        result = self.reindex("run", "com.example.test.batches", "--ids",
                              "put:early.1:Committed Cormorant,commit:batch-1,put:late.1:Discarded Dunlin,refuse:giving up")
        self.assertEqual(result.returncode, 75, result)
        self.assertIn("giving up (code -32001)", result.stderr)
        self.assertEqual(self.search("cormorant"), ["early.1"])
        self.assertEqual(self.search("dunlin"), [])
        self.assertIn("scripted: committed 1", self.log("com.example.test.batches"))

    def test_a_client_state_the_host_refuses_never_leaves_the_sdk(self):
        self.bundle("com.example.test.bigstate", ["catalogue"])
        summary = self.reindex_json("run", "com.example.test.bigstate", "--ids", "put:x.1:Sanderling,bigstate:251")
        self.assertEqual(summary["outcome"], "acknowledged", summary)
        self.assertIn("bigstate: client state is 251 bytes; at most 250 are allowed", self.log("com.example.test.bigstate"))

    def test_refusals_exit_75_with_the_message(self):
        self.bundle("com.example.test.refuse", ["refuse"])
        refused = self.reindex("run", "com.example.test.refuse")
        self.assertEqual(refused.returncode, 75, refused)
        self.assertIn("catalogue database unreachable", refused.stderr)

        self.bundle("com.example.test.crash", ["crash"])
        crashed = self.reindex("run", "com.example.test.crash", "--json")
        self.assertEqual(crashed.returncode, 75, crashed)
        self.assertIn("the catalogue is corrupt (code -32000)", crashed.stdout + crashed.stderr)
        self.assertIn("ValueError: the catalogue is corrupt", self.log("com.example.test.crash"))

    def test_sigterm_to_reindex_run_cancels_the_request(self):
        self.bundle("com.example.test.spin", ["spin"])
        command = subprocess.Popen(self.command("run", "com.example.test.spin", "--json"), stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.environment(),
                                   universal_newlines=True)
        self.addCleanup(lambda: command.poll() is None and command.kill())
        deadline = time.monotonic() + 30
        while "spinning on request" not in self.log("com.example.test.spin"):
            self.assertLess(time.monotonic(), deadline, "the extension never started spinning")
            self.assertIsNone(command.poll(), "reindex run ended early")
            time.sleep(0.05)
        time.sleep(0.2)
        command.send_signal(signal.SIGTERM)
        stdout, stderr = command.communicate(timeout=30)
        self.assertEqual(command.returncode, 75, stdout + stderr)
        self.assertIn("the request was cancelled (Request cancelled)", stdout + stderr)
        log = self.log("com.example.test.spin")
        self.assertIn("scripted: spin: cancelled after", log)
        self.assertIn("the extension exited with status 0", log)

    def test_stray_output_does_not_break_the_protocol(self):
        directory = self.bundle("com.example.test.print", ["print"])
        validated = self.reindex("validate", directory, "--run", "--check", "stdout-clean")
        self.assertEqual(validated.returncode, 0, validated)
        self.assertIn("pass  stdout-clean", validated.stdout + validated.stderr)
        summary = self.reindex_json("run", "com.example.test.print")
        self.assertEqual(summary["outcome"], "acknowledged", summary)
        self.assertNotIn("warning", str(summary).lower())
        self.assertEqual(self.search("puffin"), ["print.1"])
        log = self.log("com.example.test.print")
        for text in ["stray output before the SDK starts", "stray print in the handler", "stray write to descriptor 1",
                     "stray output of a child process", "stray sys.stdout.write"]:
            self.assertIn(text, log)

    def test_prints_at_the_top_level_and_in_init_do_not_break_the_protocol(self):
        # Before run() starts: importing the SDK under the host has already protected stdout.
        directory = self.bundle("com.example.test.early", ["print-early"])
        validated = self.reindex("validate", directory, "--run", "--check", "stdout-clean")
        self.assertEqual(validated.returncode, 0, validated)
        self.assertIn("pass  stdout-clean", validated.stdout + validated.stderr)
        summary = self.reindex_json("run", "com.example.test.early")
        self.assertEqual((summary["outcome"], summary["put"]), ("acknowledged", 1), summary)
        self.assertNotIn("warning", str(summary).lower())
        log = self.log("com.example.test.early")
        for text in ["stray print after importing the SDK", "stray write to descriptor 1 at the top level",
                     "stray print in __init__", "stray print in the handler"]:
            self.assertIn(text, log)

    def test_allow_empty_publishes_an_empty_reindex_all(self):
        self.bundle("com.example.test.empty", ["empty"])
        self.assertEqual(self.reindex_json("run", "com.example.test.empty")["put"], 2)
        self.assertEqual(self.identifiers("com.example.test.empty"), ["bird.1", "bird.2"])
        summary = self.reindex_json("run", "com.example.test.empty")
        self.assertEqual((summary["outcome"], summary["put"]), ("acknowledged", 0), summary)
        self.assertEqual(self.identifiers("com.example.test.empty"), [])
        self.assertIn("scripted: empty: putting nothing", self.log("com.example.test.empty"))
        # The same without allow_empty(): the host takes the empty run for a mistake.
        self.bundle("com.example.test.mistake", ["empty-by-mistake"])
        self.assertEqual(self.reindex_json("run", "com.example.test.mistake")["put"], 2)
        failed = self.reindex("run", "com.example.test.mistake")
        self.assertNotEqual(failed.returncode, 0, failed)
        self.assertEqual(self.identifiers("com.example.test.mistake"), ["bird.1", "bird.2"])

    def test_a_handler_that_returns_before_its_thread_is_done_is_refused_and_publishes_nothing(self):
        self.bundle("com.example.test.seeded", ["catalogue"])
        self.bundle("com.example.test.thread", ["thread"])
        failed = self.reindex("run", "com.example.test.thread")
        self.assertEqual(failed.returncode, 75, failed)
        self.assertIn("reindex_all returned while 1 thread(s) it started still run", failed.stderr)
        self.assertEqual(self.identifiers("com.example.test.thread"), [], "nothing of the half-done run is visible")
        self.assertIn("scripted: thread: RequestEnded", self.log("com.example.test.thread"))
        # A daemon thread is a background helper: not counted (what it sends late is refused).
        self.bundle("com.example.test.daemon", ["daemon-thread"])
        self.assertEqual(self.reindex_json("run", "com.example.test.daemon")["put"], 1)

    def test_validate_run_finds_no_problem(self):
        directory = self.bundle("com.example.test.validate", ["catalogue"])
        result = self.reindex("validate", directory, "--run")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn('protocol 1, extension "Test validate" 2.5.0', result.stdout + result.stderr)
        self.assertIn("com.example.test.validate: every check passed", result.stdout + result.stderr)

    def test_debug_trace_shows_the_sdk_messages(self):
        self.bundle("com.example.test.trace", ["catalogue"])
        result = self.reindex("debug", "com.example.test.trace", "--trace=full", "--scratch-index",
                              "--ids", "put:t.1:Traced Tern,progress:4")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn('ext→host', result.stderr)
        self.assertIn('"method":"index/put","params":{"items":[{"uniqueIdentifier":"t.1"', result.stderr)
        self.assertIn('"method":"$/progress","params":{"requestId":1,"completed":4,"total":10,"message":"step 4"}', result.stderr)
        self.assertIn("ext| scripted: shutdown", result.stderr)

    def test_debug_wait_for_debugger_waits_in_the_sdk_gate_whether_or_not_the_script_mentions_it(self):
        # The host lets a Python extension start and relies on the SDK's gate (it no longer holds
        # one before exec, where debugpy could not reach it), so nothing needs naming in the script.
        for name, mention in (("plain", False), ("mention", True)):
            with self.subTest(mention=mention):
                identifier = "com.example.test.gate" + name
                self.bundle(identifier, ["catalogue"], mention_gate=mention)
                result = self.reindex("debug", identifier, "--wait-for-debugger=1", "--scratch-index")
                self.assertEqual(result.returncode, 0, result)
                self.assertIn("ext| reindex-extension: pid ", result.stderr)
                self.assertIn("ext| reindex-extension: no debugger attached within 1 s; continuing without one",
                              result.stderr)
                self.assertIn("ext| scripted: reindexAll mode=catalogue", result.stderr)

if __name__ == "__main__":
    unittest.main()
