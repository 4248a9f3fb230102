"""The SDK over pipes: a fake host in the test drives tests/extensions/scripted.py."""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

from support import INITIALIZE, TESTS_DIR, FakeHost, base_environment, scripted

FAKE_DEBUGPY = os.path.join(TESTS_DIR, "fake_debugpy")


def _has_debugpy():
    try:
        import debugpy  # noqa: F401
        return True
    except ImportError:
        return False


def items_of(messages):
    return [item for m in messages if m.get("method") == "index/put" for item in m["params"]["items"]]


class ProtocolTestCase(unittest.TestCase):
    def start(self, *arguments, env=None, cwd=None, script=None):
        host = FakeHost(script or scripted(), arguments, cwd=cwd, env=env)
        self.addCleanup(host.kill)
        return host

    def started(self, *arguments, **options):
        host = self.start(*arguments, **options)
        reply = host.initialize()
        self.assertIn("result", reply, reply)
        return host

    def items(self, host, request_id, commands, reason="forced"):
        host.request(request_id, "reindexItems", {"identifiers": commands, "reason": reason})
        return host.recv_until_reply(request_id)


class InitializeTests(ProtocolTestCase):
    def test_reports_the_manifest_name_and_version_from_the_working_directory(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        with open(os.path.join(directory, "manifest.json"), "w") as file:
            json.dump({"manifestVersion": 1, "bundleIdentifier": "com.example.birds", "displayName": "Birds",
                       "version": "3.1.4", "executable": "scripted.py"}, file)
        host = self.start(cwd=directory)
        self.assertEqual(host.initialize(), {"jsonrpc": "2.0", "id": 0, "result": {
            "protocolVersion": 1, "extension": {"name": "Birds", "version": "3.1.4"}, "capabilities": {}}})
        self.assertEqual(host.close(), 0)

    def test_without_a_display_name_the_manifest_identifier_is_the_name(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        with open(os.path.join(directory, "manifest.json"), "w") as file:
            json.dump({"manifestVersion": 1, "bundleIdentifier": "com.example.birds", "executable": "x"}, file)
        reply = self.start(cwd=directory).initialize()
        self.assertEqual(reply["result"]["extension"], {"name": "com.example.birds", "version": "0"})

    def test_without_a_manifest_the_executable_name_and_version_0(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        reply = self.start(cwd=directory).initialize()
        self.assertEqual(reply["result"]["extension"], {"name": "scripted.py", "version": "0"})

    def test_the_class_attributes_override_the_manifest(self):
        host = self.start(env=base_environment(SCRIPTED_NAME="Overridden", SCRIPTED_VERSION="9.9"))
        self.assertEqual(host.initialize()["result"]["extension"], {"name": "Overridden", "version": "9.9"})

    def test_no_common_version_is_answered_with_both_lists(self):
        host = self.start()
        host.send(dict(INITIALIZE, params=dict(INITIALIZE["params"], protocolVersions=[2, 3])))
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 0, "error": {
            "code": -32602, "message": "no common protocol version", "data": {"supported": [1], "requested": [2, 3]}}})
        self.assertEqual(host.close(), 0)

    def test_the_highest_common_version_is_chosen_and_the_host_is_recorded(self):
        host = self.start()
        host.send(dict(INITIALIZE, params=dict(INITIALIZE["params"], protocolVersions=[7, 1], debug=True)))
        self.assertEqual(host.recv()["result"]["protocolVersion"], 1)
        self.items(host, 1, ["info"])
        host.close()
        self.assertIn("host=HostInfo(name='reindex', version='0.1.0', bundle_identifier='com.example.test', "
                      "debug=True, protocol_version=1, offered_versions=(7, 1))", host.stderr)

    def test_malformed_initialize_params_are_invalid_params(self):
        host = self.start()
        host.request(0, "initialize", {"protocolVersions": "1"})
        reply = host.recv()
        self.assertEqual(reply["error"]["code"], -32602, reply)

    def test_nothing_is_written_before_the_initialize_reply(self):
        host = self.start("print")
        host.send(INITIALIZE)
        reply = host.recv_raw()
        self.assertTrue(reply.startswith(b'{"jsonrpc":"2.0","id":0,'), reply)


class RequestTests(ProtocolTestCase):
    def test_reindex_all_puts_and_acknowledges(self):
        host = self.started()
        host.request(1, "reindexAll", {"reason": "forced", "clientState": None})
        messages = host.recv_until_reply(1)
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertEqual(items_of(messages), [
            {"uniqueIdentifier": "bird.1", "domainIdentifier": "com.example.birds",
             "attributes": {"title": "Osprey Notes", "keywords": ["raptor"]}},
            {"uniqueIdentifier": "bird.2", "domainIdentifier": "com.example.birds",
             "attributes": {"title": "Kestrel Notes", "keywords": ["raptor"]}},
            {"uniqueIdentifier": "bird.3", "domainIdentifier": "com.example.birds", "attributes": {"title": "Heron Notes"}},
        ])
        self.assertEqual(host.close(), 0)
        self.assertIn("scripted: reindexAll mode=catalogue reason=forced clientState=None", host.stderr)
        self.assertIn("scripted: shutdown", host.stderr)

    def test_the_client_state_is_decoded_and_unknown_reasons_are_passed_on(self):
        host = self.started()
        state = base64.b64encode(b"\x00cursor=42\xff").decode()
        host.request(1, "reindexAll", {"reason": "someNewReason", "clientState": state})
        self.assertEqual(host.recv_until_reply(1)[-1]["result"], {})
        host.close()
        self.assertIn("reason=someNewReason clientState=b'\\x00cursor=42\\xff'", host.stderr)

    def test_reindex_items_gets_the_identifiers_and_every_operation_has_its_shape(self):
        host = self.started()
        messages = self.items(host, 5, ["put:a.1:Alpha", "delete:a.2", "domains:com.example.old", "deleteAll",
                                        "progress:3", "info"], reason="expiring")
        self.assertEqual(messages, [
            {"jsonrpc": "2.0", "method": "index/put", "params": {"items": [
                {"uniqueIdentifier": "a.1", "domainIdentifier": "com.example.birds", "attributes": {"title": "Alpha"}}]}},
            {"jsonrpc": "2.0", "method": "index/delete", "params": {"identifiers": ["a.2"]}},
            {"jsonrpc": "2.0", "method": "index/deleteDomains", "params": {"domainIdentifiers": ["com.example.old"]}},
            {"jsonrpc": "2.0", "method": "index/deleteAll", "params": {}},
            {"jsonrpc": "2.0", "method": "$/progress", "params": {"requestId": 5, "completed": 3, "total": 10, "message": "step 3"}},
            {"jsonrpc": "2.0", "id": 5, "result": {}},
        ])
        host.close()
        self.assertIn("info: reason=expiring method=reindexItems request=5", host.stderr)

    def test_items_with_dates_and_bytes_are_written_in_the_protocol_shape(self):
        host = self.started()
        (put, reply) = self.items(host, 1, ["dates"])
        self.assertEqual(reply["result"], {})
        self.assertEqual(put["params"]["items"], [{
            "uniqueIdentifier": "dated.1", "expirationDate": "2027-01-01T00:00:00Z", "isUpdate": True,
            "attributes": {"title": "Dated", "startDate": "2026-03-01T07:30:00Z", "thumbnailData": "iVBORw==",
                           "endDate": "2026-03-02T00:00:00Z"}}])

    def test_a_large_put_is_split_into_messages_of_at_most_500_items(self):
        host = self.started()
        messages = self.items(host, 1, ["putmany:1201"])
        self.assertEqual([len(m["params"]["items"]) for m in messages[:-1]], [500, 500, 201])
        self.assertEqual(items_of(messages)[1200]["uniqueIdentifier"], "many.1200")
        self.assertEqual(messages[-1]["result"], {})

    def test_requests_run_one_after_another_in_one_process(self):
        host = self.started()
        for request_id in range(1, 4):
            self.assertEqual(self.items(host, request_id, ["put:x.%d" % request_id])[-1],
                             {"jsonrpc": "2.0", "id": request_id, "result": {}})
        self.assertEqual(host.close(), 0)

    def test_string_request_ids_are_copied_back_exactly(self):
        host = self.started()
        messages = self.items(host, "req-7", ["progress:1"])
        self.assertEqual(messages[0]["params"]["requestId"], "req-7")
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": "req-7", "result": {}})

    def test_malformed_request_params_are_invalid_params(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": "book.1", "reason": "forced"})
        self.assertEqual(host.recv()["error"]["code"], -32602)
        host.request(2, "reindexAll", {"clientState": None})
        self.assertEqual(host.recv()["error"]["code"], -32602)

    def test_an_unknown_request_is_method_not_found_and_unknown_notifications_are_ignored(self):
        host = self.started()
        host.notify("$/somethingNew", {"x": 1})
        host.request(1, "shutdown", {})
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "unknown method 'shutdown'"}})
        self.assertEqual(self.items(host, 2, ["put:after"])[-1]["result"], {})

    def test_unreadable_lines_and_empty_lines_are_logged_not_answered(self):
        host = self.started()
        host.send_raw(b"this is not json\n\n   \n[1,2]\n\xff\xfe\n")
        self.assertEqual(self.items(host, 1, ["put:after"])[-1]["result"], {})
        self.assertEqual(host.close(), 0)
        self.assertEqual(host.remaining(), [])
        self.assertIn("ignored an unreadable line from the host", host.stderr)

    def test_an_error_reply_with_a_null_id_is_logged(self):
        host = self.started()
        host.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad thing"}})
        host.close()
        self.assertIn("the host reported an error: bad thing", host.stderr)

    def test_an_index_kept_after_its_request_refuses_to_send(self):
        host = self.started()
        self.items(host, 1, ["stash"])
        messages = self.items(host, 2, ["stale"])
        self.assertEqual(messages, [{"jsonrpc": "2.0", "id": 2, "result": {}}])
        host.close()
        self.assertIn("stale: request 1 was already acknowledged; index.put() after reindex_items returned is not sent",
                      host.stderr)


class AllowEmptyTests(ProtocolTestCase):
    def test_allow_empty_makes_the_acknowledgement_carry_allow_empty(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        host = self.started("empty", env=base_environment(REINDEX_DATA_DIR=directory))
        host.request(1, "reindexAll", {"reason": "forced", "clientState": None})
        first = host.recv_until_reply(1)
        self.assertEqual([m.get("method") for m in first], ["index/put", None])
        self.assertEqual(first[-1], {"jsonrpc": "2.0", "id": 1, "result": {}})
        host.request(2, "reindexAll", {"reason": "forced", "clientState": None})
        self.assertEqual(host.recv_until_reply(2), [{"jsonrpc": "2.0", "id": 2, "result": {"allowEmpty": True}}])
        self.assertEqual(host.close(), 0)

    def test_allow_empty_in_reindex_items_refuses_with_a_clear_message(self):
        host = self.started()
        messages = self.items(host, 1, ["put:x.1", "allow-empty"])
        self.assertEqual(messages[-1]["error"]["code"], -32000, messages)
        self.assertIn("allow_empty() is only meaningful in reindex_all (request 1 is reindexItems)",
                      messages[-1]["error"]["message"])
        self.assertNotIn("allowEmpty", json.dumps(messages))


class LateOperationTests(ProtocolTestCase):
    """A thread the handler started and did not join uses the index after the acknowledgement."""

    def test_every_operation_after_the_acknowledgement_raises_logs_and_sends_nothing(self):
        for operation in ("put", "delete", "delete_domains", "delete_all", "progress", "commit_batch", "allow_empty"):
            with self.subTest(operation=operation):
                host = self.started()
                self.assertEqual(self.items(host, 1, ["late:" + operation]), [{"jsonrpc": "2.0", "id": 1, "result": {}}])
                # The thread runs now, during request 2: nothing of it may reach the host.
                self.assertEqual(self.items(host, 2, ["release"]), [{"jsonrpc": "2.0", "id": 2, "result": {}}])
                self.assertEqual(host.close(), 0)
                self.assertEqual(host.remaining(), [])
                expected = ("request 1 was already acknowledged; index.%s() after reindex_items returned is not sent. "
                            "A thread (or task) the handler started is still using the index: join your threads "
                            "(or await your tasks) before returning" % operation)
                self.assertIn("reindex-extension: " + expected + "\n", host.stderr)
                self.assertIn("scripted: late %s: RequestEnded: %s\n" % (operation, expected), host.stderr)

    def test_after_a_refusal_the_message_says_refused(self):
        host = self.started()
        messages = self.items(host, 1, ["late:put", "refuse:no"])
        self.assertEqual(messages[-1]["error"]["message"], "no")
        self.assertEqual(self.items(host, 2, ["release"]), [{"jsonrpc": "2.0", "id": 2, "result": {}}])
        host.close()
        self.assertIn("reindex-extension: request 1 was already refused; index.put()", host.stderr)


class RefusalTests(ProtocolTestCase):
    def test_a_request_error_refuses_with_its_code_message_and_data(self):
        host = self.started()
        messages = self.items(host, 1, ["put:a", "refuse:database unreachable"])
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": 1, "error": {
            "code": -32001, "message": "database unreachable", "data": {"why": "database unreachable"}}})
        self.assertEqual(host.close(), 0)
        self.assertNotIn("Traceback", host.stderr)

    def test_any_other_exception_refuses_with_its_message_and_logs_the_traceback(self):
        host = self.started()
        messages = self.items(host, 1, ["crash:the disk is on fire"])
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "the disk is on fire"}})
        host.close()
        self.assertIn("refusing reindexItems (request 1): Traceback", host.stderr)
        self.assertIn("RuntimeError: the disk is on fire", host.stderr)

    def test_the_process_goes_on_after_a_refusal(self):
        host = self.started()
        self.items(host, 1, ["refuse:no"])
        self.assertEqual(self.items(host, 2, ["put:a"])[-1]["result"], {})


class CommitTests(ProtocolTestCase):
    def test_commit_batch_sends_the_state_and_returns_the_count(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["put:a", "commit:next=2", "put:b"], "reason": "forced"})
        self.assertEqual(host.recv()["method"], "index/put")
        commit = host.recv()
        self.assertEqual(commit, {"jsonrpc": "2.0", "id": 1, "method": "batch/commit",
                                  "params": {"requestId": 1, "clientState": base64.b64encode(b"next=2").decode()}})
        time.sleep(0.2)
        self.assertTrue(host.lines.empty(), "the SDK went on before the commit's reply")
        host.reply(1, {"committed": 7})
        self.assertEqual(host.recv()["params"]["items"][0]["uniqueIdentifier"], "b")
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 1, "result": {}})
        host.close()
        self.assertIn("scripted: committed 7", host.stderr)

    def test_the_sdk_numbers_its_own_requests(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit:a", "commit-none", "commit:c"], "reason": "forced"})
        ids = []
        for _ in range(3):
            commit = host.recv()
            ids.append(commit["id"])
            host.reply(commit["id"], {"committed": 0})
        self.assertEqual(ids, [1, 2, 3])
        self.assertEqual(host.recv()["result"], {})

    def test_commit_without_a_state_sends_null(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit-none"], "reason": "forced"})
        self.assertEqual(host.recv()["params"], {"requestId": 1, "clientState": None})

    def test_a_state_of_250_bytes_is_sent_and_251_is_refused_before_sending(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["bigstate:251", "bigstate:250"], "reason": "forced"})
        commit = host.recv()
        self.assertEqual(base64.b64decode(commit["params"]["clientState"]), b"s" * 250)
        host.reply(commit["id"], {"committed": 0})
        self.assertEqual(host.recv()["result"], {})
        host.close()
        self.assertIn("bigstate: client state is 251 bytes; at most 250 are allowed", host.stderr)

    def test_an_error_reply_to_a_commit_raises_commit_refused(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit-refused"], "reason": "forced"})
        commit = host.recv()
        host.send({"jsonrpc": "2.0", "id": commit["id"], "error": {"code": -32602, "message": "clientState is too long"}})
        self.assertEqual(host.recv()["result"], {})
        host.close()
        self.assertIn("commit refused: the host refused the batch commit: clientState is too long (code -32602)", host.stderr)

    def test_replies_typed_ahead_by_hand_are_used(self):
        host = self.start()
        host.send_raw(b"".join((json.dumps(m) + "\n").encode() for m in [
            INITIALIZE,
            {"jsonrpc": "2.0", "id": 1, "method": "reindexItems", "params": {"identifiers": ["commit:x", "put:y"], "reason": "forced"}},
            {"jsonrpc": "2.0", "id": 1, "result": {"committed": 4}},
        ]))
        self.assertEqual(host.close(), 0)
        lines = [json.loads(line) for line in host.remaining()]
        self.assertEqual([m.get("method") for m in lines], [None, "batch/commit", "index/put", None])
        self.assertEqual(lines[-1], {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertIn("scripted: committed 4", host.stderr)


class CancelTests(ProtocolTestCase):
    def test_cancel_makes_index_operations_raise_and_is_answered_with_32800(self):
        host = self.started()
        host.request(3, "reindexItems", {"identifiers": ["spin"], "reason": "forced"})
        self.assertEqual(host.recv()["method"], "$/progress")
        host.notify("$/cancel", {"id": 3})
        reply = host.recv_until_reply(3)[-1]
        self.assertEqual(reply, {"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "Request cancelled"}})
        self.assertEqual(host.close(), 0)
        self.assertIn("spin: cancelled after", host.stderr)

    def test_a_handler_that_returns_after_a_cancel_still_gets_32800(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["spin-quiet"], "reason": "forced"})
        time.sleep(0.2)
        host.notify("$/cancel", {"id": 1})
        self.assertEqual(host.recv()["error"]["code"], -32800)
        host.close()
        self.assertIn("noticed the cancel", host.stderr)

    def test_cancel_while_waiting_for_a_commit_reply(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit-wait"], "reason": "forced"})
        commit = host.recv()
        self.assertEqual(commit["method"], "batch/commit")
        host.notify("$/cancel", {"id": 1})
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}})
        host.reply(commit["id"], {"committed": 0})  # late: ignored
        self.assertEqual(self.items(host, 2, ["put:next"])[-1]["result"], {})
        host.close()
        self.assertIn("commit-wait: cancelled", host.stderr)

    def test_no_operation_is_sent_after_a_cancel(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit-after-cancel"], "reason": "forced"})
        time.sleep(0.2)
        host.notify("$/cancel", {"id": 1})
        self.assertEqual(host.recv()["error"]["code"], -32800)
        host.close()
        self.assertEqual(host.remaining(), [])
        self.assertIn("put after cancel: Cancelled", host.stderr)

    def test_a_cancel_for_another_or_an_answered_request_is_ignored(self):
        host = self.started()
        self.items(host, 1, ["put:a"])
        host.notify("$/cancel", {"id": 1})
        host.notify("$/cancel", {"id": "1"})
        host.request(2, "reindexItems", {"identifiers": ["sleep:0.3", "put:b"], "reason": "forced"})
        host.notify("$/cancel", {"id": 1})
        messages = host.recv_until_reply(2)
        self.assertEqual(messages[-1], {"jsonrpc": "2.0", "id": 2, "result": {}})

    def test_a_request_cancelled_before_it_starts_is_answered_without_running(self):
        host = self.start()
        host.send_raw(b"".join((json.dumps(m) + "\n").encode() for m in [
            INITIALIZE,
            {"jsonrpc": "2.0", "id": 1, "method": "reindexItems", "params": {"identifiers": ["sleep:0.5"], "reason": "forced"}},
            {"jsonrpc": "2.0", "id": 2, "method": "reindexItems", "params": {"identifiers": ["put:never"], "reason": "forced"}},
            {"jsonrpc": "2.0", "method": "$/cancel", "params": {"id": 2}},
        ]))
        host.recv()
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 1, "result": {}})
        self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 2, "error": {"code": -32800, "message": "Request cancelled"}})


class StdioTests(ProtocolTestCase):
    def test_stray_output_goes_to_stderr_and_the_protocol_stays_clean(self):
        host = self.started("print")
        host.request(1, "reindexAll", {"reason": "forced", "clientState": None})
        messages = host.recv_until_reply(1)
        self.assertEqual([m.get("method") for m in messages], ["index/put", None])
        self.items(host, 2, ["print:printed in a command", "fd1:written to descriptor 1", "child:echoed by a child"])
        self.assertEqual(host.close(), 0)
        self.assertEqual(host.remaining(), [])
        for text in ["stray output before the SDK starts", "stray print in the handler", "stray write to descriptor 1",
                     "stray output of a child process", "stray sys.stdout.write", "printed in a command",
                     "written to descriptor 1", "echoed by a child"]:
            self.assertIn(text + "\n", host.stderr)

    def test_under_the_host_prints_before_run_at_the_top_level_and_in_init_go_to_stderr(self):
        # The host always sets REINDEX_BUNDLE_IDENTIFIER: importing the SDK then protects stdout.
        host = self.start("print-early", env=base_environment(REINDEX_BUNDLE_IDENTIFIER="com.example.test"))
        self.assertEqual(host.initialize()["id"], 0)
        host.request(1, "reindexAll", {"reason": "forced", "clientState": None})
        self.assertEqual([m.get("method") for m in host.recv_until_reply(1)], ["index/put", None])
        self.assertEqual(host.close(), 0)
        self.assertEqual(host.remaining(), [])
        for text in ["stray output before the SDK starts", "stray print after importing the SDK",
                     "stray write to descriptor 1 at the top level", "stray print in __init__",
                     "stray print in the handler", "stray write to descriptor 1"]:
            self.assertIn(text + "\n", host.stderr)

    def test_importing_the_sdk_protects_stdout_only_under_the_host(self):
        code = ("import os, sys; sys.path.insert(0, os.environ['REINDEX_PYTHON_SDK']); import reindex_extension; "
                "print('printed after the import', flush=True); os.write(1, b'written to descriptor 1\\n'); "
                "print(reindex_extension.stdio.protected_descriptors() is not None, file=sys.stderr)")
        alone = subprocess.run([sys.executable, "-c", code], env=base_environment(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20)
        self.assertEqual((alone.returncode, alone.stdout, alone.stderr),
                         (0, b"printed after the import\nwritten to descriptor 1\n", b"False\n"))
        hosted = subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, timeout=20,
                                env=base_environment(REINDEX_BUNDLE_IDENTIFIER="com.example.test"))
        self.assertEqual((hosted.returncode, hosted.stdout, hosted.stderr),
                         (0, b"", b"printed after the import\nwritten to descriptor 1\nTrue\n"))

    def test_input_sees_end_of_file_instead_of_the_protocol(self):
        host = self.started()
        messages = self.items(host, 1, ["input", "put:after"])
        self.assertEqual(messages[-1]["result"], {})
        host.close()
        self.assertIn("input: end of file", host.stderr)


class LifecycleTests(ProtocolTestCase):
    def test_end_of_input_exits_0_after_calling_shutdown(self):
        host = self.started()
        self.assertEqual(host.close(), 0)
        self.assertTrue(host.stderr.endswith("scripted: shutdown\n"), host.stderr)

    def test_end_of_input_before_initialize_exits_0(self):
        self.assertEqual(self.start().close(), 0)

    def test_end_of_input_while_waiting_for_a_commit_reply_ends_the_request(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["commit-wait"], "reason": "forced"})
        self.assertEqual(host.recv()["method"], "batch/commit")
        self.assertEqual(host.close(), 0)
        self.assertEqual([json.loads(line) for line in host.remaining()],
                         [{"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}}])
        self.assertIn("commit-wait: cancelled", host.stderr)

    def test_sigterm_exits_0(self):
        host = self.started()
        host.request(1, "reindexItems", {"identifiers": ["spin"], "reason": "forced"})
        host.recv()
        host.process.terminate()
        self.assertEqual(host.process.wait(10), 0)

    def test_a_closed_stdout_ends_the_request_and_the_process_exits_0(self):
        read_end, write_end = os.pipe()
        process = subprocess.Popen([sys.executable, scripted()], stdin=subprocess.PIPE, stdout=write_end,
                                   stderr=subprocess.PIPE, env=base_environment())
        os.close(write_end)
        os.close(read_end)  # every write of the extension now fails (EPIPE)
        lines = [INITIALIZE, {"jsonrpc": "2.0", "id": 1, "method": "reindexItems",
                              "params": {"identifiers": ["spin"], "reason": "forced"}}]
        _, stderr = process.communicate(b"".join((json.dumps(m) + "\n").encode() for m in lines), timeout=20)
        self.assertEqual(process.returncode, 0, stderr)
        self.assertIn(b"spin: cancelled after 0 steps", stderr)


class DebuggerGateTests(ProtocolTestCase):
    def test_without_the_variable_nothing_waits_or_is_printed(self):
        host = self.started()
        host.close()
        self.assertNotIn("debugger", host.stderr)

    def test_a_wait_that_nobody_answers_gives_up_after_the_given_seconds(self):
        started = time.monotonic()
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="1"))
        self.assertIn("result", host.initialize())
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        host.close()
        pid = host.process.pid
        self.assertIn("reindex-extension: pid %d is waiting for a debugger to attach (at most 1 s): gdb -p %d" % (pid, pid), host.stderr)
        self.assertIn("reindex-extension: no debugger attached within 1 s; continuing without one", host.stderr)

    @unittest.skipUnless(shutil.which("gdb") and sys.platform.startswith("linux"), "needs gdb on Linux")
    def test_gdb_attaching_ends_the_wait(self):
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="0"))
        deadline = time.monotonic() + 20
        while "is waiting for a debugger" not in host.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertIn("python3 -m pip install debugpy" if not _has_debugpy() else "debugpy client", host.stderr)
        gdb = subprocess.Popen(["gdb", "-p", str(host.process.pid), "-batch", "-nx", "-ex", "continue"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.addCleanup(gdb.stdout.close)
        self.addCleanup(lambda: gdb.poll() is None and gdb.kill())
        try:
            reply = host.initialize()
        except AssertionError:
            gdb.kill()
            output = gdb.communicate()[0].decode(errors="replace")
            if "ptrace" in output or "Operation not permitted" in output:
                self.skipTest("gdb cannot attach here: %s" % output[-300:])
            raise
        self.assertIn("result", reply)
        self.assertEqual(host.close(), 0)
        gdb.communicate(timeout=30)
        self.assertIn("reindex-extension: debugger attached to pid %d; continuing" % host.process.pid, host.stderr)


    def test_a_debugpy_client_ends_the_wait(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        client = os.path.join(directory, "client-attached")
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="0", PYTHONPATH=FAKE_DEBUGPY,
                                               FAKE_DEBUGPY_CLIENT=client))
        deadline = time.monotonic() + 20
        while "is waiting for a debugger" not in host.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = host.process.pid
        self.assertIn("pid %d is waiting for a debugger to attach: gdb -p %d, or attach a debugpy client to 127.0.0.1:5678"
                      % (pid, pid), host.stderr)
        time.sleep(0.3)
        self.assertNotIn("attached to pid", host.stderr)
        open(client, "w").close()
        self.assertIn("result", host.initialize())
        self.assertIn("reindex-extension: debugger attached to pid %d; continuing" % pid, host.stderr)

    def test_a_debugpy_wait_that_nobody_answers_gives_up(self):
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="1", PYTHONPATH=FAKE_DEBUGPY,
                                               FAKE_DEBUGPY_CLIENT="/nonexistent/client"))
        self.assertIn("result", host.initialize())
        self.assertEqual(host.close(), 0)
        self.assertIn("or attach a debugpy client to 127.0.0.1:5678", host.stderr)
        self.assertIn("no debugger attached within 1 s; continuing without one", host.stderr)

    def test_without_debugpy_the_gate_says_how_to_install_it(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        with open(os.path.join(directory, "debugpy.py"), "w") as file:
            file.write("raise ImportError('no debugpy here')\n")
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="1", PYTHONPATH=directory))
        self.assertIn("result", host.initialize())
        self.assertEqual(host.close(), 0)
        pid = host.process.pid
        self.assertIn("reindex-extension: pid %d is waiting for a debugger to attach (at most 1 s): gdb -p %d\n"
                      % (pid, pid), host.stderr)
        self.assertIn("reindex-extension: debugpy is not importable by %s, so only a native debugger can attach; "
                      "to debug the Python code, install it: python3 -m pip install debugpy (where the host's "
                      "sandbox can read it: " % sys.executable, host.stderr)
        self.assertNotIn("launch.json", host.stderr)

    def test_reindex_debugpy_port_moves_debugpy_and_the_launch_configuration_says_so(self):
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        client = os.path.join(directory, "client-attached")
        open(client, "w").close()
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="0", PYTHONPATH=FAKE_DEBUGPY,
                                               FAKE_DEBUGPY_CLIENT=client, REINDEX_DEBUGPY_PORT="5690"))
        self.assertIn("result", host.initialize())
        self.assertIn("or attach a debugpy client to 127.0.0.1:5690\n", host.stderr)
        self.assertIn('reindex-extension: VS Code launch.json configuration: {"type":"debugpy","request":"attach",'
                      '"connect":{"host":"127.0.0.1","port":5690}}\n', host.stderr)

    def test_a_real_debugpy_client_ends_the_wait(self):
        if not _has_debugpy():
            self.fail("debugpy is not importable: install it with python3 -m pip install debugpy")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        host = self.start(env=base_environment(REINDEX_WAIT_FOR_DEBUGGER="60", SCRIPTED_DEBUGPY_PORT=str(port),
                                               PYDEVD_DISABLE_FILE_VALIDATION="1"))
        _attach_debugpy_client(port)
        self.assertIn("result", host.initialize(), host.stderr)
        self.assertIn("attach a debugpy client to 127.0.0.1:%d" % port, host.stderr)
        self.assertIn("reindex-extension: debugger attached to pid", host.stderr)


def _attach_debugpy_client(port, timeout=30):
    """Plays a DAP client (VS Code) just far enough for debugpy.wait_for_client() to return."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    buffer = b""

    def send(seq, command, arguments):
        body = json.dumps({"seq": seq, "type": "request", "command": command, "arguments": arguments}).encode()
        connection.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive():
        nonlocal buffer
        while b"\r\n\r\n" not in buffer:
            buffer += connection.recv(65536)
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        length = int(head.split(b":")[1])
        while len(buffer) < length:
            buffer += connection.recv(65536)
        body, buffer = buffer[:length], buffer[length:]
        return json.loads(body)

    with connection:
        send(1, "initialize", {"adapterID": "reindex-test", "clientID": "reindex-test"})
        send(2, "attach", {"connect": {"host": "127.0.0.1", "port": port}, "justMyCode": False})
        while time.monotonic() < deadline:
            message = receive()
            if message.get("event") == "initialized":
                send(3, "configurationDone", {})
            elif message.get("command") == "configurationDone":
                time.sleep(0.5)
                send(4, "disconnect", {})
                return
        raise AssertionError("debugpy did not finish the attach")




if __name__ == "__main__":
    unittest.main()
