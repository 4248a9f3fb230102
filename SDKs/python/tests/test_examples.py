"""Examples/python: the bookshelf written with the SDK behaves exactly like the plain one
(bookshelf-nosdk), both pass `reindex validate`, and the SDK bookshelf finds the SDK where it is
copied (Scripts/demo.sh copies it into .demo/extensions/ with the SDK vendored beside it).

The host runs extensions sandboxed: a bundle may read its own directory, not this checkout. So
the SDK bookshelf runs through the host as a copy that either vendors the SDK or declares the
SDK directory it uses in its manifest's `sandbox.read`."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from support import (EXAMPLES_DIR, REPO_ROOT, SDK_DIR, FakeHost, HostTestCase, base_environment, copy_bundle,
                     declare_sandbox)

BOOKSHELF = os.path.join(EXAMPLES_DIR, "bookshelf")
NOSDK = os.path.join(EXAMPLES_DIR, "bookshelf-nosdk")
SDK_ID = "com.example.bookshelf.indexer"
NOSDK_ID = "com.example.bookshelf-nosdk.indexer"


def example_environment():
    """The host's kind of environment, without REINDEX_PYTHON_SDK: the example finds the SDK alone."""
    env = base_environment()
    del env["REINDEX_PYTHON_SDK"]
    return env


def edit_manifest(bundle, change):
    """Rewrites `bundle`'s manifest.json with `change(manifest)` applied."""
    path = os.path.join(bundle, "manifest.json")
    with open(path, encoding="utf-8") as file:
        manifest = json.load(file)
    change(manifest)
    with open(path, "w", encoding="utf-8") as file:
        json.dump(manifest, file, indent=2)
    os.chmod(path, 0o644)


def name_sdk(manifest, sdk=SDK_DIR):
    """Points the bookshelf at the SDK in `sdk` ($REINDEX_PYTHON_SDK) and lets it read it there."""
    manifest["environment"] = dict(manifest.get("environment", {}), REINDEX_PYTHON_SDK=sdk)
    declare_sandbox(manifest, read=[sdk])


def session(directory, requests):
    """Runs the example in `directory` through `requests` as a host would (answering each
    batch/commit with a count) and returns every line it wrote and its stderr."""
    host = FakeHost(os.path.join(directory, "bookshelf.py"), cwd=directory, env=example_environment())
    try:
        transcript = [host.initialize()]
        for request in requests:
            host.send(request)
            while True:
                message = host.recv()
                transcript.append(message)
                if message.get("method") == "batch/commit":
                    host.reply(message["id"], {"committed": 5})
                elif "method" not in message and message.get("id") == request["id"]:
                    break
        status = host.close()
        transcript.extend(json.loads(line) for line in host.remaining())
        return status, transcript, host.stderr
    finally:
        host.kill()


class BookshelfEquivalenceTests(unittest.TestCase):
    REQUESTS = [
        {"jsonrpc": "2.0", "id": 1, "method": "reindexAll", "params": {"reason": "forced", "clientState": None}},
        {"jsonrpc": "2.0", "id": 2, "method": "reindexAll",
         "params": {"reason": "retry", "clientState": base64.b64encode(b'{"next":10}').decode()}},
        {"jsonrpc": "2.0", "id": 3, "method": "reindexAll", "params": {"reason": "bundleChanged", "clientState": "bm9wZQ=="}},
        {"jsonrpc": "2.0", "id": 4, "method": "reindexItems",
         "params": {"identifiers": ["book.3", "book.99", "book.1", "book.7", "book.2", "book.4", "book.5", "book.6"],
                    "reason": "expiring"}},
    ]

    def test_the_sdk_bookshelf_says_exactly_what_the_plain_one_says(self):
        sdk_status, sdk, sdk_log = session(BOOKSHELF, json.loads(json.dumps(self.REQUESTS)))
        plain_status, plain, plain_log = session(NOSDK, json.loads(json.dumps(self.REQUESTS)))
        self.assertEqual((sdk_status, plain_status), (0, 0))
        self.assertEqual(sdk[0]["result"]["extension"], {"name": "Bookshelf", "version": "1.0.0"})
        self.assertEqual(plain[0]["result"]["extension"], {"name": "Bookshelf (no SDK)", "version": "1.0.0"})
        self.assertEqual(sdk[1:], plain[1:])
        self.assertEqual(sdk_log, plain_log)
        # Two commits in the fresh run, none resuming at book 10, two after an unreadable state.
        self.assertEqual(len([m for m in sdk if m.get("method") == "batch/commit"]), 4)
        self.assertTrue(sdk_log.endswith("bookshelf: stdin closed, exiting\n"), sdk_log)

    def test_both_answer_a_cancel_during_a_commit_with_32800(self):
        for directory in (BOOKSHELF, NOSDK):
            host = FakeHost(os.path.join(directory, "bookshelf.py"), cwd=directory, env=example_environment())
            try:
                host.initialize()
                host.send(self.REQUESTS[0])
                while host.recv().get("method") != "batch/commit":
                    pass
                host.notify("$/cancel", {"id": 1})
                self.assertEqual(host.recv(), {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "Request cancelled"}})
                self.assertEqual(host.close(), 0)
            finally:
                host.kill()


class BookshelfThroughTheHostTests(HostTestCase):
    def run_bookshelf(self, identifier):
        summary = self.reindex_json("run", identifier)
        self.assertEqual((summary["outcome"], summary["put"]), ("acknowledged", 15), summary)

    def test_validate_passes_on_both_examples(self):
        # As checked out: both bundles are valid, and the plain one, which needs nothing outside
        # its bundle, runs there. The SDK one runs as a copy whose manifest names the SDK and
        # declares it in sandbox.read (as checked out it declares nothing outside its bundle).
        installed = copy_bundle(BOOKSHELF, os.path.join(self.scratch, "installed", "bookshelf"))
        edit_manifest(installed, name_sdk)
        for directory, identifier, ran in ((BOOKSHELF, SDK_ID, installed), (NOSDK, NOSDK_ID, NOSDK)):
            for arguments, validated in (([], directory), (["--run"], ran)):
                result = self.reindex("validate", validated, *arguments)
                self.assertEqual(result.returncode, 0, result)
                if arguments:
                    self.assertIn("%s: every check passed" % identifier, result.stdout + result.stderr)

    def test_validate_run_passes_on_the_sdk_bookshelf_where_it_stands(self):
        # Examples/python/bookshelf imports SDKs/python of this checkout, outside its bundle: its
        # manifest must let the sandbox read it, with a path that holds wherever the checkout is.
        result = self.reindex("validate", BOOKSHELF, "--run")
        self.assertEqual(result.returncode, 0, result)
        self.assertIn("%s: every check passed" % SDK_ID, result.stdout + result.stderr)

    def test_a_sandbox_that_hides_the_sdk_is_named_as_the_reason(self):
        # A copy under a source tree that has the SDK, one level deeper than the example stands,
        # so its manifest's "../../../SDKs/python" does not reach it, and nothing vendored: the
        # SDK can be seen (stat) but not read, and the bookshelf says so instead of a traceback.
        self.host_in_tree(with_sdk=False)
        repository = os.path.join(self.scratch, "repository")
        shutil.copytree(os.path.join(SDK_DIR, "reindex_extension"),
                        os.path.join(repository, "SDKs", "python", "reindex_extension"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.extensions = os.path.join(repository, "Examples", "elsewhere", "python")
        copy_bundle(BOOKSHELF, os.path.join(self.extensions, "bookshelf"))
        result = self.reindex("run", SDK_ID)
        self.assertNotEqual(result.returncode, 0, result)
        self.assertIn("bookshelf: the Python SDK (reindex_extension) is in %s, but the sandbox does not let the "
                      "extension read it" % os.path.realpath(os.path.join(repository, "SDKs", "python")), result.stderr)
        self.assertNotIn("ModuleNotFoundError", result.stderr)

    def test_the_demo_copy_under_the_repository_finds_the_sdk_and_both_can_be_installed_at_once(self):
        # Scripts/demo.sh: cp -R Examples/python/bookshelf "$repo/.demo/extensions/", then
        # cp -R SDKs/python/reindex_extension into that copy (the sandbox keeps the extension
        # out of the repository around it). Here the repository is a scratch one holding just
        # the SDK package.
        self.host_in_tree(with_sdk=False)
        repository = os.path.join(self.scratch, "repository")
        shutil.copytree(os.path.join(SDK_DIR, "reindex_extension"),
                        os.path.join(repository, "SDKs", "python", "reindex_extension"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.extensions = os.path.join(repository, ".demo", "extensions")
        os.makedirs(self.extensions)
        for source in (BOOKSHELF, NOSDK):
            subprocess.run(["cp", "-R", source, self.extensions + "/"], check=True)
        subprocess.run(["cp", "-R", os.path.join(repository, "SDKs", "python", "reindex_extension"),
                        os.path.join(self.extensions, "bookshelf") + "/"], check=True)
        listed = self.reindex_json("list")
        self.assertIn(SDK_ID, json.dumps(listed))
        self.assertIn(NOSDK_ID, json.dumps(listed))
        self.run_bookshelf(SDK_ID)
        self.run_bookshelf(NOSDK_ID)
        results = self.reindex_json("search", "dune")["results"]
        self.assertEqual(sorted((r["bundleIdentifier"], r["uniqueIdentifier"]) for r in results),
                         [(NOSDK_ID, "book.1"), (NOSDK_ID, "book.9"), (SDK_ID, "book.1"), (SDK_ID, "book.9")])
        self.assertIn("initialized: Bookshelf 1.0.0", self.log(SDK_ID))

    def test_a_copy_elsewhere_with_the_sdk_vendored_beside_it(self):
        self.host_in_tree(with_sdk=False)
        bundle = copy_bundle(BOOKSHELF, os.path.join(self.extensions, "bookshelf"))
        shutil.copytree(os.path.join(SDK_DIR, "reindex_extension"), os.path.join(bundle, "reindex_extension"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.run_bookshelf(SDK_ID)

    def test_a_copy_elsewhere_with_the_sdk_named_in_the_manifest(self):
        self.host_in_tree(with_sdk=False)
        bundle = copy_bundle(BOOKSHELF, os.path.join(self.extensions, "bookshelf"))
        edit_manifest(bundle, name_sdk)
        self.run_bookshelf(SDK_ID)

    def host_in_tree(self, with_sdk):
        """Runs a copy of the host from .build/debug/ of a scratch source tree (with or without
        SDKs/python), as `swift test` runs the host built in the repository; returns the tree."""
        tree = os.path.join(self.scratch, "tree")
        os.makedirs(os.path.join(tree, ".build", "debug"))
        self.binary = shutil.copy(self.binary, os.path.join(tree, ".build", "debug", "reindex"))
        if with_sdk:
            shutil.copytree(os.path.join(SDK_DIR, "reindex_extension"),
                            os.path.join(tree, "SDKs", "python", "reindex_extension"),
                            ignore=shutil.ignore_patterns("__pycache__"))
        return tree

    @unittest.skipUnless(os.path.isdir("/proc/self"), "needs /proc")
    def test_a_copy_elsewhere_finds_the_sdk_of_the_tree_the_host_was_built_in(self):
        # What the host's own tests do: they copy manifest.json, bookshelf.py and books.json alone.
        # The bookshelf finds the host through /proc/$REINDEX_HOST_PID/exe, which Landlock's
        # ptrace scoping denies to a sandboxed process (even with the tree's SDK declared in
        # sandbox.read, and even when the host runs as root): sandboxed, the bookshelf cannot
        # find the SDK this way, so this one copy runs with its sandbox turned off.
        tree = self.host_in_tree(with_sdk=True)
        bundle = os.path.join(self.extensions, "bookshelf")
        os.makedirs(bundle)
        for name in ("manifest.json", "bookshelf.py", "books.json"):
            shutil.copy(os.path.join(BOOKSHELF, name), bundle)
        edit_manifest(bundle, lambda manifest: manifest.update(sandbox=False))
        self.run_bookshelf(SDK_ID)

    def test_a_copy_elsewhere_without_the_sdk_says_how_to_get_it(self):
        if subprocess.run(["python3", "-c", "import reindex_extension"], cwd=self.scratch, env=example_environment(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            self.skipTest("reindex_extension is installed for python3 here")
        if os.path.commonpath([os.path.realpath(self.scratch), REPO_ROOT]) == REPO_ROOT:
            self.skipTest("the scratch directory is inside the repository")
        self.host_in_tree(with_sdk=False)
        copy_bundle(BOOKSHELF, os.path.join(self.extensions, "bookshelf"))
        result = self.reindex("run", SDK_ID)
        self.assertNotEqual(result.returncode, 0, result)
        self.assertIn("cannot find the Python SDK (reindex_extension)", result.stderr)


class ReadmeExampleTests(HostTestCase):
    def test_the_first_extension_of_the_readme_works(self):
        with open(os.path.join(SDK_DIR, "README.md"), encoding="utf-8") as file:
            readme = file.read()
        section = readme[readme.index("## A first extension"):]
        manifest = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
        script = section.split("```python\n", 1)[1].split("```", 1)[0]
        self.assertLessEqual(len(script.splitlines()), 15)
        bundle = os.path.join(self.extensions, "notes")
        os.makedirs(bundle)
        with open(os.path.join(bundle, manifest["executable"]), "w", encoding="utf-8") as file:
            file.write(script.replace("#!/usr/bin/env python3", "#!" + sys.executable, 1))
        os.chmod(os.path.join(bundle, manifest["executable"]), 0o755)
        manifest["environment"] = {"PYTHONPATH": SDK_DIR, "PYTHONDONTWRITEBYTECODE": "1"}
        declare_sandbox(manifest, read=[SDK_DIR])  # the SDK is outside the bundle
        with open(os.path.join(bundle, "manifest.json"), "w", encoding="utf-8") as file:
            json.dump(manifest, file)
        self.assertEqual(self.reindex("validate", bundle, "--run").returncode, 0)
        summary = self.reindex_json("run", manifest["bundleIdentifier"])
        self.assertEqual((summary["outcome"], summary["put"]), ("acknowledged", 2), summary)
        self.assertEqual(self.search("plumber"), ["note.2"])
        summary = self.reindex_json("run", manifest["bundleIdentifier"], "--ids", "note.1,note.2,note.9")
        self.assertEqual((summary["outcome"], summary["put"]), ("acknowledged", 2), summary)
        self.assertEqual(self.identifiers(manifest["bundleIdentifier"]), ["note.1", "note.2"])
        self.assertIn("initialized: Notes 1.0.0", self.log(manifest["bundleIdentifier"]))


class PackageTests(unittest.TestCase):
    def test_pip_installs_the_package(self):
        if subprocess.run(["python3", "-m", "pip", "--version"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode != 0:
            self.skipTest("no pip for python3")
        scratch = tempfile.mkdtemp(prefix="reindex-python-sdk-pip-")
        self.addCleanup(shutil.rmtree, scratch, True)
        source = os.path.join(scratch, "source")  # a copy: pip builds in the source directory
        shutil.copytree(SDK_DIR, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info", "tests"))
        target = os.path.join(scratch, "target")
        command = ["python3", "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                   "--no-cache-dir", "--target", target, source]
        # Offline when setuptools (>= 61) and wheel are at hand; else pip fetches them to build.
        offline = subprocess.run(["python3", "-c", "import setuptools, wheel, sys; "
                                  "sys.exit(int(setuptools.__version__.split('.')[0]) < 61)"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if offline:
            command.insert(4, "--no-build-isolation")
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if result.returncode != 0 and not offline and any(
                text in result.stdout for text in ("No matching distribution", "Could not find a version", "NewConnectionError")):
            self.skipTest("pip cannot fetch setuptools to build with: %s" % result.stdout[-300:])
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertTrue(os.path.isfile(os.path.join(target, "reindex_extension", "py.typed")))
        check = subprocess.run(["python3", "-c", "import reindex_extension as r; print(r.__file__, r.__version__)"],
                               cwd=scratch, env=dict(os.environ, PYTHONPATH=target),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(check.returncode, 0, check.stdout)
        self.assertTrue(check.stdout.startswith(os.path.join(target, "reindex_extension")), check.stdout)


if __name__ == "__main__":
    unittest.main()
