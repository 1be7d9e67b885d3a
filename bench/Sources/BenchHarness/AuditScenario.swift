import Foundation
import IDTokenAudit
import IDTokenConfiguration
import IDTokenKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `audit` scenario: `AuditEngine` over a whole log file, as `idtoken audit` runs it (records rendered as
/// NDJSON, no output sink), compared with the raw RSA-2048 verify rate measured just before and just after.
/// Its operations are records; its CPU time is the whole process's (reader, workers and the ordering thread).
///
/// Present when `--audit-log FILE` (or `IDTK_BENCH_AUDIT_LOG`) names a log, for example one made by
/// `python3 Vectors/tools/audit_log.py log --lines 1000000 --out /tmp/audit-1m.log`. The profiles come from
/// `--audit-config` (default: the sample configuration the generator's tokens are made for), the time for
/// records without one from `--audit-at` or the configuration's `at`.
///
/// With `--iterations N` (callgrind) it audits the first N lines of the log, copied to a file of their own first,
/// on one worker thread.
func auditScenarios(_ options: Options) throws -> [Scenario] {
    guard let log = options.auditLog else { return [] }
    guard FileManager.default.isReadableFile(atPath: log) else { throw BenchError("cannot read the audit log \(log)") }
    let configuration = try ConfigurationFile.load(path: options.auditConfig)
    let at: Double
    if let text = options.auditAt {
        at = try UnixTime.parse(text).orThrow("--audit-at takes Unix seconds or an RFC 3339 time, not \(text)")
    } else {
        at = try configuration.at.orThrow("\(options.auditConfig) has no \"at\": give --audit-at")
    }
    let verifier = try configuration.verifier()
    let cacheCapacity = options.auditCacheCapacity
    let name = (log as NSString).lastPathComponent
    return [Scenario(name: "audit", summary: "AuditEngine.run over \(name), \(configuration.profiles.count) profiles, NDJSON rendered",
                     baseline: "raw-rsa2048") { threads, lineLimit in
        // With a line limit, the first lines are written to a file of their own and read from it like any log:
        // read(2) into each chunk, as `idtoken audit` reads, with no copy in the process to count.
        var path = log
        if let lineLimit {
            guard let bytes = try? firstLines(of: log, count: lineLimit) else { return Sample(failed: 1) }
            path = NSTemporaryDirectory() + "idtoken-bench-audit-\(getpid())-\(lineLimit).log"
            guard FileManager.default.createFile(atPath: path, contents: bytes) else { return Sample(failed: 1) }
        }
        defer { if path != log { unlink(path) } }
        guard let source = try? FileByteSource(path: path) else { return Sample(failed: 1) }
        let engine = AuditEngine(verifier: verifier, options: AuditOptions(threads: threads, defaultTime: at,
                                                                      cacheCapacity: cacheCapacity))
        PeakMemory.reset()
        let cpu0 = processCPUSeconds()
        let wall0 = monotonicSeconds()
        guard let summary = try? engine.run(source), summary.inputError == nil, summary.records > 0 else {
            return Sample(failed: 1)
        }
        var sample = Sample(operations: summary.records, wallSeconds: monotonicSeconds() - wall0,
                            cpuSeconds: processCPUSeconds() - cpu0, failures: 0)
        sample.peakResidentBytes = PeakMemory.residentBytes()
        return sample
    }]
}

/// The first `count` lines of a file (with their line breaks): the file mapped, not read, and cut at the
/// count-th line break found by memchr, so that under callgrind the harness's own reading costs a few dozen
/// instructions a line and the audit's count is the engine's.
private func firstLines(of path: String, count: Int) throws -> Data {
    let data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
    let cut = data.withUnsafeBytes { buffer -> Int in
        guard let base = buffer.baseAddress else { return 0 }
        var lines = 0, scanned = 0
        while lines < count, scanned < buffer.count, let hit = memchr(base + scanned, 0x0A, buffer.count - scanned) {
            lines += 1
            scanned = base.distance(to: UnsafeRawPointer(hit)) + 1
        }
        return lines < count ? buffer.count : scanned
    }
    return data.prefix(cut)
}

/// The process's peak resident memory. Linux resets the peak on request (`/proc/self/clear_refs`), so that each
/// run of a scenario reports its own; elsewhere it is the process's peak so far (`getrusage`).
enum PeakMemory {
    static func reset() {
        #if os(Linux)
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            try? handle.write(contentsOf: Data("5".utf8))
            try? handle.close()
        }
        #endif
    }

    static func residentBytes() -> Int {
        #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kib = Int(line.filter(\.isNumber)) {
            return kib * 1024
        }
        #endif
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if os(Linux)
        return Int(usage.ru_maxrss) * 1024        // KiB on Linux
        #else
        return Int(usage.ru_maxrss)               // bytes on macOS
        #endif
    }
}
