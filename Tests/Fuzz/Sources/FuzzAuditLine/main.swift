import Foundation
import FuzzDriver
@testable import IDTokenAudit  // the engine's API is package-level; -enable-testing builds reach it
@testable import IDTokenConfiguration
import IDTokenKit

// The audit's input path: LineReader over plain or gzip bytes, RecordExtractor on every line, and the whole
// AuditEngine (the sample configuration's Firebase, Apple and Facebook profiles, routed by issuer) writing NDJSON
// or CSV.
//
// The first input byte picks the options: bit 0 gzip, bit 3 CSV instead of NDJSON, bits 1–2 and 4–7 the chunk
// size and the line cap; the rest is the log. Checks, besides "never crash":
// - plain input: the lines are exactly the LF-separated pieces (a CR before the LF dropped), numbered from 1, cut
//   at the cap with their real length kept;
// - every record comes from its line: a bare or embedded token is bytes of the line; an unreadable line is
//   `malformed`; a blank line gives no record;
// - the audit reports one result per record, in line order, and the NDJSON output is one JSON object per result
//   with the same line, verdict and error code.

let configuration: ConfigurationFile = {
    do { return try ConfigurationFile.load(path: Fuzz.repositoryRoot.appendingPathComponent("Vectors/samples/audit-config.json").path) }
    catch { Fuzz.fail("\(error)") }
}()
let verifier: MultiProfileVerifier = {
    do { return try configuration.verifier() } catch { Fuzz.fail("\(error)") }
}()
let at = configuration.at ?? 1_767_268_800

final class MemorySink: AuditSink {
    var bytes: [UInt8] = []
    func write(_ bytes: [UInt8]) { self.bytes += bytes }
    func flush() {}
}

/// The input's lines as a plain split would have them: LF-separated, the last one only if not empty.
func plainLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines
}

func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}

func checkLines(_ bytes: [UInt8], chunkSize: Int, maxLine: Int) {
    let reader = LineReader(MemoryByteSource(bytes, chunkSize: chunkSize), maxLineBytes: maxLine)
    let expected = plainLines(bytes)
    var k = 0
    while let line = reader.next() {
        guard k < expected.count else { Fuzz.fail("line \(line.number) beyond the \(expected.count) lines of the input") }
        let raw = expected[k]
        let stripped = raw.last == 0x0D ? raw.dropLast() : raw
        if line.number != k + 1 { Fuzz.fail("line numbered \(line.number), expected \(k + 1)") }
        if stripped.count <= maxLine {
            if !line.bytes.elementsEqual(stripped) || line.length != stripped.count || line.isOverLong {
                Fuzz.fail("line \(k + 1): read \(Fuzz.show(line.bytes)) (\(line.length) bytes), expected \(Fuzz.show(stripped))")
            }
        } else if !line.isOverLong || !line.bytes.elementsEqual(raw.prefix(maxLine)) || line.length != raw.count {
            Fuzz.fail("line \(k + 1) over the \(maxLine)-byte cap: read \(line.bytes.count) bytes of \(line.length), expected \(maxLine) of \(raw.count)")
        }
        checkRecord(line)
        k += 1
    }
    if k != expected.count { Fuzz.fail("read \(k) lines of \(expected.count)") }
    if let error = reader.inputError { Fuzz.fail("memory input failed: \(error)") }
}

func checkRecord(_ line: RawLine) {
    guard let record = RecordExtractor().extract(line) else {
        if !line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) || line.isOverLong {
            Fuzz.fail("line \(line.number) gave no record but is not blank: \(Fuzz.show(line.bytes))")
        }
        return
    }
    if record.line != line.number { Fuzz.fail("record of line \(line.number) says line \(record.line)") }
    switch record.form {
    case .unreadable:
        if record.problem?.code != .malformed || record.token != nil { Fuzz.fail("unreadable line \(line.number) without a malformed problem") }
    case .bareToken, .text:
        guard let token = record.token else { Fuzz.fail("\(record.form) record without a token on line \(line.number)") }
        if !contains(Array(line.bytes), Array(token.utf8)) { Fuzz.fail("token not taken from line \(line.number): \(token)") }
    case .json:
        if record.token == nil, record.problem?.code != .malformed { Fuzz.fail("JSON record without token or problem on line \(line.number)") }
    }
}

func checkAudit(_ bytes: [UInt8], gzip: Bool, csv: Bool, chunkSize: Int, maxLine: Int) {
    let memory = MemoryByteSource(bytes, chunkSize: chunkSize)
    let source: any ByteSource
    if gzip {
        do { source = try GzipByteSource(memory, chunkSize: chunkSize) } catch { Fuzz.fail("\(error)") }
    } else {
        source = memory
    }
    let options = AuditOptions(threads: 1, defaultTime: at, maxLineBytes: maxLine, cacheCapacity: 64, batchLines: 3,
                               format: csv ? .csv : .ndjson)
    let sink = MemorySink()
    var results: [AuditResult] = []
    let summary: AuditSummary
    do {
        summary = try AuditEngine(verifier: verifier, options: options).run(source, output: sink, onResult: { results.append($0) })
    } catch {
        Fuzz.fail("the audit failed: \(error)")
    }
    if !gzip, summary.inputError != nil { Fuzz.fail("memory input failed: \(String(describing: summary.inputError))") }
    if summary.records != results.count { Fuzz.fail("summary counts \(summary.records) records, \(results.count) reported") }
    for (a, b) in zip(results, results.dropFirst()) where a.line >= b.line { Fuzz.fail("results out of order: \(a.line), \(b.line)") }
    for result in results where result.isValid && !result.signatureVerified { Fuzz.fail("line \(result.line) valid without a signature") }
    guard !csv else { return }
    let output = sink.bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
    if output.count != results.count { Fuzz.fail("\(output.count) output lines for \(results.count) results") }
    for (line, result) in zip(output, results) {
        guard let tree = try? JSONTree.parse(Array(line)), tree.objectMembers != nil else {
            Fuzz.fail("output line is not a JSON object: \(Fuzz.show(line))")
        }
        if tree["line"]?.int64 != Int64(result.line) || tree["valid"]?.bool != result.isValid
            || tree["error"]?.string != result.error?.code.rawValue {
            Fuzz.fail("output \(Fuzz.show(line)) does not match line \(result.line): \(result.error?.code.rawValue ?? "valid")")
        }
    }
}

Fuzz.run { raw in
    guard let mode = raw.first else { return }
    let bytes = [UInt8](raw.dropFirst())
    let chunkSize = [1, 2, 3, 7, 64, 4096, 65536, 1 << 20][Int(mode >> 1) & 3 | Int(mode >> 5) & 4]
    let maxLine = [1, 16, 200, 4096, 1 << 20, 12, 40, 3000][Int(mode >> 4) & 7]
    let gzip = mode & 1 == 1
    if !gzip { checkLines(bytes, chunkSize: chunkSize, maxLine: maxLine) }
    checkAudit(bytes, gzip: gzip, csv: mode & 8 != 0, chunkSize: chunkSize, maxLine: maxLine)
}
