#!/usr/bin/env python3
"""Type-checks every Swift example in the README and the DocC articles against the built modules.

Usage: check_examples.py BIN_PATH [CLANG_ARG...]   (scripts/docs passes the debug build's path and the C flags)

The ```swift blocks of each document, in order, become the body of one `async throws` function in a file
of its own (with the imports every example may assume), after a prelude that declares the values the examples take as given: the token a request
carried (`idToken`, `bearer`, `identityToken`), the raw nonce, a key source and a revocation table. The files
are type-checked with `swiftc -typecheck`; any error fails, naming the document and the line of the block.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

PRELUDE = """import Foundation
import IDTokenKit
import IDTokenKitRedis

// What the examples take as given.
let idToken = ""
let bearer = ""
let identityToken = ""
let rawNonce = ""
let keySource: any KeySource = StaticKeySource(JWKSet(keys: []))
let keys = keySource
let revokedUsers: [String: Date] = [:]
"""


def blocks(path):
    text = open(path).read().split("\n")
    inside, start, body = False, 0, []
    for number, line in enumerate(text, 1):
        if not inside and line.strip() == "```swift":
            inside, start, body = True, number + 1, []
        elif inside and line.strip() == "```":
            inside = False
            yield start, body
        elif inside:
            body.append(line)


def main():
    work = tempfile.mkdtemp(prefix="idtk-examples-")
    try:
        return check(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(work):
    """Type-checks every document's examples in `work`; 0 when they all pass."""
    bin_path, clang_args = sys.argv[1], sys.argv[2:]
    documents = ["README.md"] + sorted(glob.glob("Sources/*/*.docc/*.md")) + sorted(glob.glob("docs/*.md"))
    files, origin = [], {}
    with open(os.path.join(work, "Prelude.swift"), "w") as handle:
        handle.write(PRELUDE)
    for document in documents:
        # The blocks of one document run in one function, in order: an article builds a value in one block
        # and uses it in the next, as a reader would.
        lines, where = [], []
        for start, body in blocks(document):
            imports = [l for l in body if re.match(r"\s*import \w+", l)]
            if any(m.strip().split()[1] not in ("IDTokenKit", "IDTokenKitRedis", "IDTokenAudit", "Foundation", "JOSE")
                   for m in imports):
                continue  # an example for another package (Vapor, Hummingbird): built by that package's tests
            if any(".package(" in l or ".product(" in l for l in body):
                continue  # a Package.swift fragment, not code
            for offset, line in enumerate(body):
                if line not in imports:
                    lines.append(line)
                    where.append(start + offset)
        if not lines:
            continue
        name = f"Example{len(files) + 1}.swift"
        origin[name] = (document, where)
        with open(os.path.join(work, name), "w") as handle:
            handle.write("import Foundation; import IDTokenKit; import IDTokenKitRedis; import IDTokenAudit\n")
            handle.write(f"func example{len(files) + 1}() async throws {{\n")
            handle.write("\n".join(lines) + "\n}\n")
        files.append(os.path.join(work, name))
    if not files:
        print("check_examples: no Swift examples found", file=sys.stderr)
        return 1
    command = ["swiftc", "-typecheck", "-parse-as-library", "-module-name", "Examples", "-I",
               os.path.join(bin_path, "Modules"), os.path.join(work, "Prelude.swift")] + files + clang_args
    result = subprocess.run(command, capture_output=True, text=True)
    output = result.stdout + result.stderr
    errors = [l for l in output.split("\n") if ": error:" in l]
    for line in errors:
        match = re.match(r".*/(Example\d+\.swift):(\d+):\d+: error: (.*)", line)
        if match and match.group(1) in origin:
            document, where = origin[match.group(1)]
            # line 1 holds the imports, line 2 the function's head, then the document's lines
            index = int(match.group(2)) - 3
            line_number = where[index] if 0 <= index < len(where) else 0
            print(f"{document}:{line_number}: {match.group(3)}", file=sys.stderr)
        else:
            print(line, file=sys.stderr)
    if result.returncode != 0:
        if not errors:
            print(output, file=sys.stderr)
        print(f"check_examples: {len(files)} documents with examples, {len(errors)} error(s)", file=sys.stderr)
        return 1
    print(f"check_examples: the Swift examples of {len(files)} documents type-check", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
