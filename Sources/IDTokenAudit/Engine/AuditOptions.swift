import Foundation
import IDTokenKit

/// How an ``AuditEngine`` runs.
package struct AuditOptions: Sendable {
    /// Verification threads (default: every core).
    package var threads: Int
    /// The time (Unix seconds) to judge records that carry none.
    package var defaultTime: Double
    /// The raw nonce for records that carry none (usually nil: nonces belong to single sign-ins).
    package var defaultNonce: String?
    /// The longest line kept, in bytes; longer lines are reported as `malformed` without being read into memory.
    package var maxLineBytes: Int
    /// Distinct tokens whose verdicts are remembered (per generation; see ``VerdictCache``); 0 turns it off.
    package var cacheCapacity: Int
    /// Lines handed to a worker at once, and the most bytes of line data in one such batch. With the batches in
    /// flight per thread, these bound the memory the input takes: 16 threads × 2 batches × 256 KiB (a batch also
    /// keeps the input chunks its lines are slices of). At 512 KiB × 3 an audit with 16 threads peaked at 122 MB,
    /// at 256 KiB × 2 at 93 MB, with no difference in speed measured (BENCHMARKS.md, issue 27).
    package var batchLines: Int
    package var batchBytes: Int
    /// Batches in flight (read but not yet written) per thread: bounds the reorder buffer.
    package var batchesPerThread: Int
    package var format: OutputFormat
    /// Seconds between two progress reports.
    package var progressInterval: Double
    /// When set, only this shard's lines are judged (DESIGN §12); the others are read and skipped.
    package var shard: Shard?
    /// Pipe mode (DESIGN §12): every input line gets exactly one output line, blank ones included (as
    /// `malformed`), and the output is flushed whenever the input has nothing more to give at once.
    package var pipe = false
    /// The number of the input's first line (1, or more when the input is a piece of a larger log).
    package var firstLine = 1
    /// How the workers compute the RS256 signatures they verify together (``SignatureBatch``): by default the IFMA
    /// kernel where the CPU has it, else libcrypto one at a time. Every implementation gives the same verdicts.
    package var signatures: RSABatchImplementation = .selected

    package init(threads: Int = ProcessInfo.processInfo.activeProcessorCount, defaultTime: Double,
                defaultNonce: String? = nil, maxLineBytes: Int = 1 << 20, cacheCapacity: Int = 8192,
                batchLines: Int = 512, batchBytes: Int = 256 << 10, batchesPerThread: Int = 2,
                format: OutputFormat = .ndjson, progressInterval: Double = 0.5) {
        self.threads = max(1, threads)
        self.defaultTime = defaultTime
        self.defaultNonce = defaultNonce
        self.maxLineBytes = maxLineBytes
        self.cacheCapacity = cacheCapacity
        self.batchLines = max(1, batchLines)
        self.batchBytes = max(1, batchBytes)
        self.batchesPerThread = max(1, batchesPerThread)
        self.format = format
        self.progressInterval = progressInterval
    }
}

/// Where an audit is, for a progress line.
package struct AuditProgress: Sendable {
    package let records: Int
    package let lines: Int
    package let elapsedSeconds: Double
    /// Bytes of input consumed (compressed bytes for gzip) and the input's size when known.
    package let bytesRead: Int64
    package let totalBytes: Int64?

    package var recordsPerSecond: Double { elapsedSeconds > 0 ? Double(records) / elapsedSeconds : 0 }

    /// The fraction of the input read, when its size is known.
    package var fraction: Double? {
        guard let totalBytes, totalBytes > 0 else { return nil }
        return min(1, Double(bytesRead) / Double(totalBytes))
    }

    /// Seconds left at the rate so far, when the input's size is known.
    package var etaSeconds: Double? {
        guard let fraction, fraction > 0, elapsedSeconds > 0 else { return nil }
        return elapsedSeconds * (1 - fraction) / fraction
    }

    /// `1,204,000 records  41,200/s  63%  ETA 0:12`.
    package var line: String {
        var text = "\(AuditProgress.grouped(records)) records  \(AuditProgress.grouped(Int(recordsPerSecond)))/s"
        if let fraction { text += "  \(Int(fraction * 100))%" }
        if let eta = etaSeconds {
            let seconds = Int(eta.rounded())
            text += "  ETA " + (seconds >= 3600 ? "\(seconds / 3600):" + two(seconds / 60 % 60) : "\(seconds / 60)") + ":" + two(seconds % 60)
        }
        return text
    }

    private func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    static func grouped(_ n: Int) -> String {
        let digits = String(n)
        var out = ""
        for (k, c) in digits.enumerated() {
            if k > 0 && (digits.count - k) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return out
    }
}
