import Foundation
import IDTokenAudit
import IDTokenConfiguration
import IDTokenKit
import Testing

/// The bundled sample (Vectors/samples/), read relative to this file so that a fresh clone is self-contained.
enum Sample {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Vectors/samples").standardizedFileURL.path
    static var log: String { directory + "/sample.log" }
    static var gzip: String { directory + "/sample.log.gz" }
    static var config: String { directory + "/audit-config.json" }
    /// 2026-01-01T12:00:00Z, the sample's time for records without one.
    static let at: Double = 1_767_268_800

    static func bytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw TestFailure("cannot read \(path)") }
        return Array(data)
    }

    /// The verifier of the sample's configuration: Firebase, Apple and Facebook, routed by issuer.
    static func verifier() throws -> MultiProfileVerifier {
        try ConfigurationFile.load(path: config).verifier()
    }

    /// What the generator says the audit must find (computed in Python, not by IDTokenKit).
    static func expected() throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(try bytes(directory + "/expected-summary.json")))
        return object as? [String: Any] ?? [:]
    }

    /// A valid token of each provider from the sample (those of JSON records, with their nonce if any).
    static func validTokens() throws -> [String: (token: String, claims: [String: Any])] {
        let verifier = try verifier()
        let reader = LineReader(MemoryByteSource(try bytes(log)))
        var found: [String: (String, [String: Any])] = [:]
        while let line = reader.next() {
            guard let record = RecordExtractor().extract(line), let token = record.token, record.nonce == nil else { continue }
            let judgement = verifier.evaluate(token, at: record.at ?? at, nonce: nil)
            guard judgement.isValid, let profile = judgement.profile, found[profile] == nil,
                  let claims = judgement.claims,
                  let decoded = try JSONSerialization.jsonObject(with: Data(claims.rawJSON.utf8)) as? [String: Any] else { continue }
            found[profile] = (token, decoded)
        }
        return found
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs an audit over bytes in memory and returns every result, the output text and the summary.
struct AuditRun {
    var results: [AuditResult] = []
    var output = ""
    var summary = AuditSummary()

    init(_ bytes: [UInt8], verifier: MultiProfileVerifier, threads: Int = 2, format: OutputFormat = .ndjson, replay: (any ReplayDetector)? = nil,
         cache: Int = 16_384, batchLines: Int = 7, maxLineBytes: Int = 1 << 20, chunkSize: Int = 4096, at: Double = Sample.at,
         signatures: RSABatchImplementation = .selected) throws {
        try self.init(MemoryByteSource(bytes, chunkSize: chunkSize), verifier: verifier, threads: threads, format: format, replay: replay,
                      cache: cache, batchLines: batchLines, maxLineBytes: maxLineBytes, at: at, signatures: signatures)
    }

    init(_ source: any ByteSource, verifier: MultiProfileVerifier, threads: Int = 2, format: OutputFormat = .ndjson,
         replay: (any ReplayDetector)? = nil, cache: Int = 16_384, batchLines: Int = 7, maxLineBytes: Int = 1 << 20,
         at: Double = Sample.at, signatures: RSABatchImplementation = .selected) throws {
        var options = AuditOptions(threads: threads, defaultTime: at, maxLineBytes: maxLineBytes, cacheCapacity: cache,
                                   batchLines: batchLines, format: format)
        options.signatures = signatures
        let sink = MemorySink()
        var results: [AuditResult] = []
        summary = try AuditEngine(verifier: verifier, options: options).run(source, output: sink, replay: replay,
                                                                        onResult: { results.append($0) })
        self.results = results
        output = String(decoding: sink.bytes, as: UTF8.self)
    }
}

/// Collects output in memory.
final class MemorySink: AuditSink {
    var bytes: [UInt8] = []
    func write(_ bytes: [UInt8]) { self.bytes += bytes }
    func flush() {}
}

/// A JSON record line.
func record(_ token: String, at: Double? = nil, id: String? = nil, nonce: String? = nil) -> String {
    var object: [String: Any] = ["token": token]
    if let at { object["at"] = at }
    if let id { object["id"] = id }
    if let nonce { object["nonce"] = nonce }
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return String(decoding: data, as: UTF8.self)
}

/// The peak resident memory of this process so far, in bytes (Linux: VmHWM).
func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let digits = line.split(separator: " ").compactMap { Int($0) }.first
        return digits.map { $0 * 1024 }
    }
    return nil
}

/// Checks a sixteen-byte run scan (`scan(base, length)`: the index of the first byte it refuses, or `length`) against
/// the byte check `belongs`: every byte value at every position of runs of 16 to 130 bytes of each `fill`.
func expectRunEndsWhereBytesSay(fills: String, belongs: (UInt8) -> Bool, _ scan: (UnsafePointer<UInt8>, Int) -> Int,
                                sourceLocation: SourceLocation = #_sourceLocation) {
    // Lengths the sixteen-byte steps and the tail read, and (64 and more) the sixty-four-byte blocks before them.
    var mismatches: [String] = []
    for length in [16, 23, 32, 64, 77, 130] {
        for position in 0..<length {
            for value in 0...255 {
                for fill in Array(fills.utf8) {
                    var bytes = Array(repeating: fill, count: length)
                    bytes[position] = UInt8(value)
                    let end = bytes.withUnsafeBufferPointer { scan($0.baseAddress!, length) }
                    if end != (belongs(UInt8(value)) ? length : position) { mismatches.append("byte \(value) at \(position) of \(length): \(end)") }
                }
            }
        }
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(5))", sourceLocation: sourceLocation)
}
