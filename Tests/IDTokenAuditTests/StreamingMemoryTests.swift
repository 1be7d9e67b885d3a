import Foundation
import IDTokenAudit
import IDTokenKit
import Testing

/// An input far larger than anything the audit may hold, generated as it is read (neither in memory nor on
/// disk): the audit streams it with flat memory and gives every repetition of the log the same verdicts.
///
/// 64 MB by default; `IDTK_AUDIT_STREAM_MB=1024` streams a gigabyte (README, "Development", has the measurement
/// of `idtoken audit` over a 1 GB file).
@Suite("Streaming")
struct StreamingMemoryTests {
    /// Serves `log` over and over until `total` bytes have gone out, in chunks, like a file being read.
    final class RepeatingByteSource: ByteSource {
        let log: [UInt8]
        let total: Int64
        private(set) var bytesConsumed: Int64 = 0
        var totalBytes: Int64? { total }

        init(_ log: [UInt8], total: Int64) {
            self.log = log
            self.total = total
        }

        func nextChunk() throws(AuditInputError) -> [UInt8]? {
            guard bytesConsumed < total else { return nil }
            let count = Int(min(Int64(log.count), total - bytesConsumed))
            bytesConsumed += Int64(count)
            return Array(log[0..<count])
        }
    }

    /// Counts what the audit writes and keeps none of it.
    final class CountingSink: AuditSink {
        var bytes = 0
        var lines = 0
        func write(_ bytes: [UInt8]) {
            self.bytes += bytes.count
            lines += bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        }
        func flush() {}
    }

    @Test func aLogManyTimesTheSizeOfMemoryBudgetStreamsInFlatMemory() throws {
        let megabytes = ProcessInfo.processInfo.environment["IDTK_AUDIT_STREAM_MB"].flatMap(Int.init) ?? 64
        var log = try Sample.bytes(Sample.log)
        if log.last != 0x0A { log.append(0x0A) }
        let repetitions = Int64(megabytes << 20) / Int64(log.count)
        let total = repetitions * Int64(log.count)   // whole repetitions, so that every pass is the same

        // One pass, for the verdicts every repetition must repeat.
        let once = try AuditRun(log, verifier: try Sample.verifier())
        let recordsPerPass = once.results.count
        let validPerPass = once.results.filter(\.isValid).count
        #expect(recordsPerPass > 50)

        let sink = CountingSink()
        var valid = 0, records = 0
        let before = peakResidentBytes()
        let options = AuditOptions(threads: 2, defaultTime: Sample.at)
        let summary = try AuditEngine(verifier: try Sample.verifier(), options: options)
            .run(RepeatingByteSource(log, total: total), output: sink, onResult: { result in
                records += 1
                if result.isValid { valid += 1 }
            })
        let after = peakResidentBytes()

        #expect(records == recordsPerPass * Int(repetitions))
        #expect(valid == validPerPass * Int(repetitions))
        #expect(summary.records == records)
        #expect(sink.lines == records)
        // Peak resident memory is printed, not asserted: this process runs the other suites at the same time,
        // and their allocations count in its peak. The bound is asserted on a process of its own by
        // Vectors/tools/check_audit_cli.py (`idtoken audit -` over 128 MB written into its standard input, peak
        // under 100 MB), which scripts/test runs.
        print("streamed \(total >> 20) MB (\(records) records) with peak resident memory +\(((after ?? 0) - (before ?? 0)) >> 20) MB, \(sink.bytes >> 20) MB written")
    }
}
