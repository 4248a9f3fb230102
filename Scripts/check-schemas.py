#!/usr/bin/env python3
"""Checks the JSON Schemas in schemas/ against the 2020-12 metaschema, against the sample
manifests and protocol messages, and against the host itself.

    python3 Scripts/check-schemas.py [--no-host]

1. Both schemas are valid JSON Schema 2020-12, and every property carries a title and a
   description (editors show them as help).
2. Every manifest.json under Examples/ and Tests/Fixtures/ validates.
3. Agreement: each manifest under schemas/tests/manifests/valid/ must be accepted, and each
   under invalid/ refused, by the schema AND by `$REINDEX_BIN validate DIR` (DIR is a temporary
   bundle holding the manifest and an executable file at its `executable` path); a refusal must
   name the same key path on both sides. The example manifests and Fuzz/corpus/manifest/ are
   compared too. pending/ holds manifests the contract's Additions forbid but the host does not
   check yet: the schema must refuse them; the host's verdict is reported, not failed.
4. Every line of schemas/tests/messages/valid.jsonl validates against protocol-v1.schema.json
   and no line of invalid.jsonl does (lines starting with '#' are comments). Lines traced from a
   live `reindex debug --trace=full` run of each Examples/python/*/ bundle (run from a temporary
   copy) must validate too, and the items of every index/put sample are fed to `reindex put` to
   compare the host's item checks.
5. The example manifests, items and messages in docs/PROTOCOL-V1.md and docs/PROTOCOL.md
   validate.

`jsonschema` (4.0 or later) is needed to run this check, not to use the schemas.
REINDEX_BIN names the host binary (default /work/snap/reindex). --no-host skips the host.
Exit status: 0 all checks pass, 1 a check failed, 2 the check could not run.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
MANIFEST_SCHEMA = SCHEMAS / "manifest.schema.json"
PROTOCOL_SCHEMA = SCHEMAS / "protocol-v1.schema.json"
MANIFEST_TESTS = SCHEMAS / "tests" / "manifests"
MESSAGE_TESTS = SCHEMAS / "tests" / "messages"
DEFAULT_HOST = "/work/snap/reindex"

try:
    import jsonschema
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError, best_match
except ImportError:
    print("check-schemas: the Python package 'jsonschema' (4.0 or later) is missing; it is needed only to run\n"
          "this check. Install it with 'python3 -m pip install jsonschema' (or your system's python3-jsonschema).",
          file=sys.stderr)
    sys.exit(2)


# MARK: Validation with ECMA-262 '$'

def ecma_pattern(pattern):
    """JSON Schema patterns are ECMA-262, where '$' (without the m flag) matches only at the very
    end. Python's '$' also matches before a final newline, so "com.example\\n" would pass
    ^…$; rewrite each unescaped '$' outside a character class as '\\Z'."""
    out, escaped, in_class = [], False, False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "[" and not in_class:
            in_class = True
            out.append(char)
        elif char == "]" and in_class:
            in_class = False
            out.append(char)
        elif char == "$" and not in_class:
            out.append(r"\Z")
        else:
            out.append(char)
    return re.compile("".join(out))


_compiled = {}


def _pattern(validator, pattern, instance, schema):
    if not validator.is_type(instance, "string"):
        return
    compiled = _compiled.get(pattern) or _compiled.setdefault(pattern, ecma_pattern(pattern))
    if not compiled.search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


Validator = jsonschema.validators.extend(Draft202012Validator, {"pattern": _pattern})


def load_json_text(text):
    """Parses JSON as the host does: NaN and Infinity are not JSON; the last duplicate key wins."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def key_path(parts):
    """['timeouts', 'idleSeconds'] -> timeouts.idleSeconds; ['protocolVersions', 1] -> protocolVersions[1]."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def schema_error(validator, instance):
    """The most relevant error (key path, message), or None when the instance is valid."""
    error = best_match(validator.iter_errors(instance))
    if error is None:
        return None
    parts = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        if missing:
            parts.append(missing[0])
    return key_path(parts), error.message


# MARK: Reporting

class Report:
    def __init__(self):
        self.failures = []
        self.notes = []

    def section(self, title):
        print(f"\n== {title}")

    def ok(self, text):
        print(f"  ok    {text}")

    def fail(self, text):
        print(f"  FAIL  {text}")
        self.failures.append(text)

    def note(self, text):
        print(f"  note  {text}")
        self.notes.append(text)


def rel(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# MARK: 1. The schemas themselves

def resolve_local(root, ref):
    node = root
    for token in ref.lstrip("#/").split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


def missing_help(root, node, where, found):
    """Every schema under "properties" needs a title and a description (or a $ref to one that has them)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    target = prop
                    if isinstance(prop, dict) and "$ref" in prop and not ("title" in prop and "description" in prop):
                        target = {**resolve_local(root, prop["$ref"]), **prop}
                    if not (isinstance(target, dict) and "title" in target and "description" in target):
                        found.append(f"{where}/properties/{name}")
            missing_help(root, value, f"{where}/{key}", found)
    elif isinstance(node, list):
        for n, value in enumerate(node):
            missing_help(root, value, f"{where}/{n}", found)


def check_schemas(report):
    report.section("1. Schemas against the JSON Schema 2020-12 metaschema")
    schemas = {}
    for path in (MANIFEST_SCHEMA, PROTOCOL_SCHEMA):
        try:
            schema = load_json_text(path.read_text(encoding="utf-8"))
            Validator.check_schema(schema)
        except (OSError, ValueError, jsonschema.exceptions.SchemaError) as error:
            report.fail(f"{rel(path)}: {error}")
            continue
        if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
            report.fail(f"{rel(path)}: \"$schema\" is not the 2020-12 metaschema")
        found = []
        missing_help(schema, schema, "#", found)
        if found:
            report.fail(f"{rel(path)}: properties without a title or description: {', '.join(found)}")
        else:
            report.ok(f"{rel(path)}: valid 2020-12 schema; every property has a title and a description")
        schemas[path] = schema
    return schemas


# MARK: The host

class Host:
    def __init__(self, binary):
        self.binary = binary

    def validate(self, manifest_bytes):
        """Runs `reindex validate` on a temporary bundle: (accepted, error text)."""
        with tempfile.TemporaryDirectory(prefix="check-schemas.") as root:
            bundle = Path(root) / "bundle"
            bundle.mkdir()
            manifest = bundle / "manifest.json"
            manifest.write_bytes(self._make_executable(root, bundle, manifest_bytes))
            os.chmod(manifest, 0o644)
            result = subprocess.run([self.binary, "validate", str(bundle)], capture_output=True, text=True,
                                    timeout=60, env=self._environment(root))
            text = (result.stderr.strip() or result.stdout.strip()).replace(str(manifest), "manifest.json")
            text = text.replace(str(bundle), "BUNDLE")
            if result.returncode not in (0, 65):
                raise RuntimeError(f"`reindex validate` exited with status {result.returncode}: {text}")
            return result.returncode == 0, text

    @staticmethod
    def _environment(root):
        env = {k: v for k, v in os.environ.items() if not k.startswith("REINDEX_")}
        env.update(XDG_DATA_HOME=f"{root}/xdg-data", XDG_DATA_DIRS=f"{root}/xdg-dirs", XDG_STATE_HOME=f"{root}/xdg-state",
                   XDG_CACHE_HOME=f"{root}/xdg-cache")
        return env

    @staticmethod
    def _make_executable(root, bundle, manifest_bytes):
        """Puts an executable file (mode 0755) at the manifest's `executable` and returns the
        manifest's bytes. A relative path is created inside the bundle; an absolute path that does
        not exist on this machine is moved under the temporary directory (the manifest then names
        that copy: still an absolute path, so the schema's verdict is unchanged)."""
        try:
            manifest = load_json_text(manifest_bytes.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return manifest_bytes
        executable = manifest.get("executable") if isinstance(manifest, dict) else None
        if not isinstance(executable, str) or not executable or "\0" in executable:
            return manifest_bytes
        if os.path.isabs(executable):
            if os.path.exists(executable):
                return manifest_bytes
            moved = root + "/absolute" + os.path.normpath(executable)
            quoted = json.dumps(executable).encode("utf-8")
            if quoted in manifest_bytes:
                manifest_bytes = manifest_bytes.replace(quoted, json.dumps(moved).encode("utf-8"))
            else:
                manifest["executable"] = moved
                manifest_bytes = json.dumps(manifest).encode("utf-8")
            target = Path(moved)
        else:
            target = Path(os.path.normpath(bundle / executable))
        if not str(target).startswith(root + os.sep):
            return manifest_bytes
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#!/bin/sh\nexit 0\n")
        os.chmod(target, 0o755)
        return manifest_bytes

    def put_items(self, items):
        """Feeds items to `reindex put` (one per line): {0-based position: reason} of those it rejected."""
        with tempfile.TemporaryDirectory(prefix="check-schemas.") as root:
            lines = "".join(json.dumps(item, ensure_ascii=False, separators=(",", ":")) + "\n" for item in items)
            result = subprocess.run([self.binary, "--index", f"{root}/index.db", "put", "com.example.schema-check"],
                                    input=lines, capture_output=True, text=True, timeout=120, env=self._environment(root))
            if result.returncode not in (0, 65):
                raise RuntimeError(f"`reindex put` exited with status {result.returncode}: {result.stderr.strip()}")
            rejected = {}
            for match in re.finditer(r"stdin line (\d+): (.*?); line skipped", result.stderr):
                rejected[int(match.group(1)) - 1] = match.group(2)
            return rejected

    def trace(self, bundle_directory):
        """Runs `reindex debug --trace=full` on a copy of a bundle and returns the traced lines.
        The copy keeps the repository clean: its manifest adds PYTHONDONTWRITEBYTECODE=1 and, for
        the Python SDK's example, the SDK is copied in beside the script."""
        with tempfile.TemporaryDirectory(prefix="check-schemas.") as root:
            copy = Path(root) / "extensions" / bundle_directory.name
            shutil.copytree(bundle_directory, copy, ignore=shutil.ignore_patterns("__pycache__"))
            manifest = load_json_text((copy / "manifest.json").read_text(encoding="utf-8"))
            environment = dict(manifest.get("environment") or {}, PYTHONDONTWRITEBYTECODE="1")
            # Installed as a user would: the SDK beside the script (the extension runs sandboxed
            # and reads its own bundle, not this checkout).
            sdk = ROOT / "SDKs" / "python" / "reindex_extension"
            if sdk.is_dir() and (copy / "bookshelf.py").exists() and "bookshelf-nosdk" not in str(copy):
                shutil.copytree(sdk, copy / "reindex_extension", ignore=shutil.ignore_patterns("__pycache__"))
            manifest["environment"] = environment
            (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
            result = subprocess.run(
                [self.binary, "--index", f"{root}/index.db", "--extensions-path", str(copy.parent),
                 "debug", manifest["bundleIdentifier"], "--trace=full"],
                capture_output=True, text=True, timeout=120, env=self._environment(root))
            if result.returncode != 0:
                raise RuntimeError(f"`reindex debug` exited with status {result.returncode}: {result.stderr.strip()[-400:]}")
            lines = []
            for line in result.stderr.splitlines():
                match = re.match(r"trace \+[0-9.]+s (?:host→ext|ext→host) \d+ B  (.*)$", line)
                if match:
                    lines.append(match.group(1))
            return lines


def host_error_path(text):
    """The key path of a host error such as `error: manifest.json: timeouts.idleSeconds: expected …`."""
    detail = text.split("manifest.json: ", 1)[-1]
    match = re.match(r"([A-Za-z0-9_$]+(?:\.[A-Za-z0-9_$]+|\[\d+\])*): ", detail)
    return match.group(1) if match else ""


# MARK: 2. and 3. Manifests

def example_manifests():
    found = []
    for top in ("Examples", "Tests/Fixtures"):
        for path in sorted((ROOT / top).rglob("manifest.json")):
            if ".build" not in path.parts:
                found.append(path)
    return found


def check_example_manifests(report, validator):
    report.section("2. manifest.json files under Examples/ and Tests/Fixtures/")
    paths = example_manifests()
    for path in paths:
        try:
            problem = schema_error(validator, load_json_text(path.read_text(encoding="utf-8")))
        except ValueError as error:
            problem = ("", f"not JSON: {error}")
        if problem:
            report.fail(f"{rel(path)}: {problem[0] or '(top level)'}: {problem[1]}")
        else:
            report.ok(rel(path))
    fixtures = [p for p in paths if "Tests" in p.parts]
    if not fixtures:
        report.note("Tests/Fixtures/ holds no manifest.json (the Swift tests write theirs); "
                    "representative ones are in schemas/tests/manifests/valid/fixture-*.json")


def compare_manifest(report, validator, host, path, expected):
    """One manifest through the schema and the host. expected: 'valid', 'invalid' or 'pending'."""
    raw = path.read_bytes()
    try:
        problem = schema_error(validator, load_json_text(raw.decode("utf-8")))
        schema_ok = problem is None
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        problem, schema_ok = ("", f"not JSON: {error}"), None
    host_ok, host_text = host.validate(raw) if host else (None, "")
    name = rel(path)
    schema_says = "accepts" if schema_ok else "refuses"

    if expected == "pending":
        if schema_ok:
            report.fail(f"{name}: the schema accepts a manifest the contract forbids")
        elif host is None:
            report.ok(f"{name}: schema refuses ({problem[0]})")
        elif host_ok:
            report.note(f"{name}: host does not check yet (schema refuses {problem[0] or 'the document'}: {problem[1]})")
        else:
            report.note(f"{name}: the host now refuses it too ({host_text}); move it to invalid/")
        return

    if schema_ok is None:
        # Not JSON at all: only the host can judge; it must refuse.
        if host is not None and host_ok:
            report.fail(f"{name}: not JSON, yet the host accepts it")
        else:
            report.ok(f"{name}: not JSON; refused{' by the host' if host else ''}")
        return
    if expected == "valid" and not schema_ok:
        report.fail(f"{name}: schema refuses a valid manifest: {problem[0] or '(top level)'}: {problem[1]}")
        return
    if expected == "invalid" and schema_ok:
        report.fail(f"{name}: schema accepts an invalid manifest")
        return
    if host is None:
        report.ok(f"{name}: schema {schema_says}")
        return
    if host_ok != schema_ok:
        if not host_ok and "not valid JSON" in host_text:
            report.note(f"{name}: the host refuses it at the JSON level, which a schema cannot express: {host_text}")
            return
        report.fail(f"{name}: schema {schema_says}, host {'accepts' if host_ok else 'refuses'}"
                    + (f" ({host_text})" if host_text and not host_ok else f" (schema: {problem[0]}: {problem[1]})" if problem else ""))
        return
    if schema_ok:
        report.ok(f"{name}: valid for schema and host")
        return
    host_path = host_error_path(host_text)
    if "not valid JSON" not in host_text and host_path != problem[0]:
        report.fail(f"{name}: both refuse, but for different keys: schema {problem[0] or '(top level)'} ({problem[1]}), "
                    f"host {host_path or '(top level)'} ({host_text})")
        return
    report.ok(f"{name}: invalid for schema and host ({host_path or problem[0] or 'top level'})")


def check_manifest_agreement(report, validator, host):
    report.section("3. Manifest agreement between the schema and " + (f"the host ({host.binary})" if host else "(host skipped)"))
    counts = {}
    for expected in ("valid", "invalid", "pending"):
        files = sorted((MANIFEST_TESTS / expected).glob("*.json"))
        counts[expected] = len(files)
        for path in files:
            compare_manifest(report, validator, host, path, expected)
    for path in example_manifests():
        compare_manifest(report, validator, host, path, "valid")
    corpus = ROOT / "Fuzz" / "corpus" / "manifest"
    for path in sorted(corpus.glob("*")) if corpus.is_dir() else []:
        # The fuzz corpus mixes valid and invalid manifests: the schema's verdict must match the host's.
        try:
            instance = load_json_text(path.read_bytes().decode("utf-8"))
            expected = "valid" if schema_error(validator, instance) is None else "invalid"
        except (UnicodeDecodeError, ValueError, RecursionError):
            expected = "invalid"
        compare_manifest(report, validator, host, path, expected)
    if counts["invalid"] < 25:
        report.fail(f"only {counts['invalid']} invalid manifests in {rel(MANIFEST_TESTS / 'invalid')}; keep at least 25")
    print(f"  ({counts['valid']} valid, {counts['invalid']} invalid, {counts['pending']} pending test manifests)")


# MARK: 4. Messages

def read_samples(path):
    samples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.strip() and not line.startswith("#"):
            samples.append((number, line))
    return samples


def check_messages(report, validator, item_validator, host):
    report.section("4. Protocol messages")
    collected_items = []  # (where, item, schema problem or None)

    def items_of(where, message):
        if isinstance(message, dict) and message.get("method") == "index/put" and "id" not in message:
            items = (message.get("params") or {}).get("items") if isinstance(message.get("params"), dict) else None
            if isinstance(items, list):
                for n, item in enumerate(items):
                    collected_items.append((f"{where} item {n}", item, schema_error(item_validator, item)))

    for kind in ("valid", "invalid"):
        path = MESSAGE_TESTS / f"{kind}.jsonl"
        samples = read_samples(path)
        bad = 0
        for number, line in samples:
            try:
                message = load_json_text(line)
                problem = schema_error(validator, message)
            except ValueError as error:
                message, problem = None, ("", f"not JSON: {error}")
            items_of(f"{rel(path)}:{number}", message)
            if kind == "valid" and problem:
                bad += 1
                report.fail(f"{rel(path)}:{number}: refused: {problem[0] or '(top level)'}: {problem[1][:200]}")
            elif kind == "invalid" and not problem:
                bad += 1
                report.fail(f"{rel(path)}:{number}: accepted: {line[:160]}")
        if not bad:
            report.ok(f"{rel(path)}: all {len(samples)} lines {'validate' if kind == 'valid' else 'are refused'}")

    if host is None:
        return
    # Live: every line of a real session with each Python example (python3 runs them).
    examples = sorted(path.parent for path in (ROOT / "Examples" / "python").glob("*/manifest.json"))
    if not examples or not shutil.which("python3"):
        report.note("no Examples/python/*/ bundle or no python3: live trace skipped")
    for bundle in examples:
        try:
            lines = host.trace(bundle)
        except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as error:
            report.note(f"live trace of {rel(bundle)} could not run: {error}")
            continue
        refused = 0
        for n, line in enumerate(lines):
            problem = schema_error(validator, load_json_text(line))
            if problem:
                refused += 1
                report.fail(f"live trace of {rel(bundle)}, line {n + 1} refused: {problem[0]}: {problem[1][:200]}")
        if not lines:
            report.fail(f"live trace of {rel(bundle)}: no traced lines")
        elif not refused:
            report.ok(f"live `reindex debug --trace=full` of {rel(bundle)}: all {len(lines)} lines validate")

    # Item agreement: every item of an index/put sample, through the schema and through `reindex put`.
    try:
        rejected = host.put_items([item for _, item, _ in collected_items])
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        report.fail(f"`reindex put` of the sample items: {error}")
        return
    agreed = 0
    for n, (where, item, problem) in enumerate(collected_items):
        host_refuses = n in rejected
        if host_refuses == (problem is not None):
            agreed += 1
        elif problem and problem[0].startswith("isUpdate"):
            report.note(f"{where}: host does not check yet ({problem[0]}: {problem[1]})")
        else:
            report.fail(f"{where}: schema {'refuses' if problem else 'accepts'} the item"
                        + (f" ({problem[0]}: {problem[1]})" if problem else "")
                        + f", host {'refuses' if host_refuses else 'accepts'} it"
                        + (f" ({rejected[n]})" if host_refuses else ""))
    report.ok(f"items of index/put samples: schema and `reindex put` agree on {agreed} of {len(collected_items)}")


def check_documents(report, manifest_validator, protocol_validator, item_validator):
    """The examples in the protocol documents: fenced manifests, items and protocol lines."""
    report.section("5. Examples in docs/PROTOCOL-V1.md and docs/PROTOCOL.md")
    for path in (ROOT / "docs" / "PROTOCOL-V1.md", ROOT / "docs" / "PROTOCOL.md"):
        if not path.is_file():
            report.fail(f"{rel(path)} is missing")
            continue
        checked, text = 0, path.read_text(encoding="utf-8")
        for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S):
            candidates = []
            try:
                candidates.append(load_json_text(block))
            except ValueError:
                for line in block.split("\n"):
                    start = line.find('{"jsonrpc"')
                    if start < 0:
                        continue
                    try:
                        candidates.append(load_json_text(line[start:]))
                    except ValueError:
                        report.note(f"{rel(path)}: a protocol line that is not JSON (a placeholder?): {line[start:][:80]}")
            for value in candidates:
                if isinstance(value, dict) and "jsonrpc" in value:
                    validator, what = protocol_validator, "message"
                elif isinstance(value, dict) and "manifestVersion" in value:
                    validator, what = manifest_validator, "manifest"
                elif isinstance(value, dict) and "uniqueIdentifier" in value:
                    validator, what = item_validator, "item"
                else:
                    continue
                checked += 1
                problem = schema_error(validator, value)
                if problem:
                    report.fail(f"{rel(path)}: an example {what} is refused: {problem[0] or '(top level)'}: {problem[1][:160]}")
        report.ok(f"{rel(path)}: {checked} example manifests, items and messages checked")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-host", action="store_true", help="check the schemas and samples only, without the host")
    options = parser.parse_args()

    host = None
    if not options.no_host:
        binary = os.environ.get("REINDEX_BIN", DEFAULT_HOST)
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            print(f"check-schemas: no host binary at {binary}; set REINDEX_BIN, or pass --no-host to skip the host checks",
                  file=sys.stderr)
            return 2
        host = Host(binary)

    report = Report()
    schemas = check_schemas(report)
    if len(schemas) != 2:
        print("\nFAILED: the schemas themselves are broken; nothing else was checked")
        return 1
    manifest_validator = Validator(schemas[MANIFEST_SCHEMA])
    protocol_validator = Validator(schemas[PROTOCOL_SCHEMA])
    # The same document with the item definition as its root, so its $refs still resolve.
    item_schema = {key: value for key, value in schemas[PROTOCOL_SCHEMA].items() if key != "anyOf"}
    item_validator = Validator({**item_schema, "$ref": "#/$defs/item"})
    check_example_manifests(report, manifest_validator)
    check_manifest_agreement(report, manifest_validator, host)
    check_messages(report, protocol_validator, item_validator, host)
    check_documents(report, manifest_validator, protocol_validator, item_validator)

    print()
    if report.notes:
        print(f"{len(report.notes)} note(s) (not failures):")
        for note in report.notes:
            print(f"  - {note}")
    if report.failures:
        print(f"FAILED: {len(report.failures)} problem(s)")
        return 1
    print("OK: schemas, samples" + (" and host agree" if host else " check out (host not run)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
