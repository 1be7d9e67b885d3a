#!/usr/bin/env python3
"""Checks the public surface of the project's library modules from their symbol graphs.

Usage: public_api.py SYMBOL_GRAPH_DIR MODULE...

Fails (exit 1), naming each declaration, when a public or open declaration of a listed module
- mentions an unsafe pointer type or OpaquePointer (pointer fast paths shared between the project's modules
  are `package`, never `public`), or a type from one of the C modules (CLibCrypto, CJansson, CHiredis,
  CJOSEShims), or
- has no documentation comment of its own (members that merely implement a documented protocol requirement,
  such as `==`, `hash(into:)`, `description` or `init(from:)`, are exempt), or
- is one of the names kept out of the public API (NOT_PUBLIC): helpers that only the project's own modules, the
  command line or the benchmarks use, and names that would collide with a framework's in an app importing both.
Prints the number of public symbols per module.
"""
import json
import os
import re
import sys

POINTER = re.compile(r"\b(Unsafe(Mutable)?(Raw)?(Buffer)?Pointer|OpaquePointer|AutoreleasingUnsafeMutablePointer)\b")
C_MODULES = ("CLibCrypto", "CJansson", "CHiredis", "CJOSEShims")
# Package-level on purpose. SHA256: swift-crypto's `SHA256`, which Vapor re-exports, would be ambiguous in a Vapor
# app that imports IDTokenKit (the Vapor integration's tests compile `SHA256.hash(data:)` beside both); the
# digest helpers on byte arrays likewise. RawVerifyBaseline: the benchmarks' raw-primitive floor.
# KeySourceResolver: how the command line and the configuration file read `--keys` / `"keys"`.
NOT_PUBLIC = {"SHA256", "lowercaseHex", "RawVerifyBaseline", "KeySourceResolver"}
# Requirements of standard protocols: their meaning is the protocol's, documented there.
PROTOCOL_WITNESSES = {
    "==(_:_:)", "!=(_:_:)", "<(_:_:)", "hash(into:)", "hashValue", "description", "debugDescription",
    "init(from:)", "encode(to:)", "init(rawValue:)", "rawValue", "allCases", "makeIterator()", "next()",
    "errorDescription", "init(stringLiteral:)", "init(integerLiteral:)", "init(arrayLiteral:)",
    "init(dictionaryLiteral:)", "init(booleanLiteral:)", "init(floatLiteral:)", "init(nilLiteral:)",
    "startIndex", "endIndex", "index(after:)", "index(before:)", "subscript(_:)", "count", "isEmpty",
}


def declaration(symbol):
    return "".join(f.get("spelling", "") for f in symbol.get("declarationFragments", []))


def main():
    directory, modules = sys.argv[1], sys.argv[2:]
    problems = []
    for module in modules:
        files = [f for f in os.listdir(directory)
                 if f == f"{module}.symbols.json" or f.startswith(f"{module}@")]
        if not files:
            problems.append(f"{module}: no symbol graph in {directory}")
            continue
        public = 0
        for name in sorted(files):
            with open(os.path.join(directory, name)) as handle:
                graph = json.load(handle)
            for symbol in graph.get("symbols", []):
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                public += 1
                path = ".".join(symbol.get("pathComponents", []))
                kept = NOT_PUBLIC.intersection(symbol.get("pathComponents", []))
                if kept:
                    problems.append(f"{module}: {path}: {', '.join(sorted(kept))} must not be public (NOT_PUBLIC)")
                text = declaration(symbol)
                if POINTER.search(text):
                    problems.append(f"{module}: {path}: unsafe pointer in a public declaration: {text}")
                for fragment in symbol.get("declarationFragments", []):
                    usr = fragment.get("preciseIdentifier", "")
                    if usr.startswith("c:") and fragment.get("kind") == "typeIdentifier":
                        problems.append(f"{module}: {path}: C type {fragment['spelling']} in a public declaration")
                    if any(c in usr for c in C_MODULES):
                        problems.append(f"{module}: {path}: C module type in a public declaration: {text}")
                last = symbol.get("pathComponents", [""])[-1]
                documented = bool(symbol.get("docComment", {}).get("lines"))
                if not documented and last not in PROTOCOL_WITNESSES and not last.startswith("_"):
                    kind = symbol.get("kind", {}).get("displayName", "symbol")
                    problems.append(f"{module}: {path}: public {kind.lower()} without a documentation comment")
        print(f"public_api: {module}: {public} public symbols", file=sys.stderr)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"public_api: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
