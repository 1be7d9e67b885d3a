import Foundation
import IDTokenKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Audits a log of tokens: reads it as a stream, judges every record on several threads, and writes the verdicts
/// in input order with a summary.
///
/// ```swift
/// let engine = AuditEngine(judge: judge, options: AuditOptions(defaultTime: 1_767_225_600))
/// let summary = try engine.run(try FileByteSource(path: "tokens.log"), output: FileSink(handle: .standardOutput))
/// print(summary.json())
/// ```
///
/// One reader thread splits the input into lines and hands batches of lines to `options.threads` worker
/// threads, which extract each record, judge it (or take its verdict from the ``VerdictCache``) and render its
/// output line. The calling thread puts the batches back in order, runs the replay stage, adds each result to
/// the summary and writes the output. At most `threads × batchesPerThread` batches are in flight, so memory does
/// not grow with the input: a batch holds at most `batchLines` lines and about `batchBytes` bytes.
public final class AuditEngine: @unchecked Sendable {
    public let judge: any TokenJudge
    public let options: AuditOptions
    private let extractor = RecordExtractor()

    public init(judge: any TokenJudge, options: AuditOptions) {
        self.judge = judge
        self.options = options
    }

    /// Audits `input`.
    ///
    /// - Parameters:
    ///   - output: receives the header and one line per record, in input order (nil: no per-record output).
    ///   - replay: the replay stage, when replays are to be found: second and later appearances of a token that
    ///     passed every other check are `replayed`.
    ///   - onResult: called with each result, in input order, on the calling thread.
    ///   - progress: called about every `options.progressInterval` seconds, and once at the end.
    /// - Returns: the summary. An input that could not be read to its end is not an error here: the records
    ///   before the failure are audited and ``AuditSummary/inputError`` says what happened.
    /// - Throws: ``AuditOutputError`` when writing the output fails or the replay stage cannot answer (a replay
    ///   store that is down); the audit stops there.
    public func run(_ input: any ByteSource, output: (any AuditSink)? = nil, replay: (any ReplayDetector)? = nil,
                    onResult: ((AuditResult) -> Void)? = nil,
                    progress: ((AuditProgress) -> Void)? = nil) throws -> AuditSummary {
        let started = DispatchTime.now().uptimeNanoseconds
        let startedCPU = clock()
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }

        let reader = HandOff(LineReader(input, maxLineBytes: options.maxLineBytes, firstLine: options.firstLine))
        let totalBytes = reader.value.totalBytes
        let work = BlockingQueue<Batch>()
        let done = ReorderBuffer<Processed>()
        let inFlight = DispatchSemaphore(value: options.threads * options.batchesPerThread)
        let cancelled = Flag()
        let cache = VerdictCache(capacity: options.cacheCapacity)
        let findReplays = replay != nil

        let readerThread = Thread { [options] in
            var sequence = 0
            var lines: [RawLine] = []
            var bytes = 0
            func send() {
                inFlight.wait()
                work.push(Batch(sequence: sequence, lines: lines, bytesRead: reader.value.bytesConsumed, linesRead: reader.value.linesRead))
                sequence += 1
                lines = []
                bytes = 0
            }
            let shard = options.shard
            while !cancelled.isSet, let line = reader.value.next() {
                // Another shard's line: skipped before any parsing, so it costs only the split.
                if let shard, !shard.contains(line: line.number) { continue }
                bytes += line.bytes.count + 64
                lines.append(line)
                if lines.count >= options.batchLines || bytes >= options.batchBytes { send() }
                // A pipe's reader never holds lines back while it waits for more input: a consumer that answers
                // line by line gets its answers.
                else if options.pipe && !reader.value.hasBufferedInput { send() }
            }
            if !lines.isEmpty && !cancelled.isSet { send() }
            done.finish(count: sequence)
            work.close()
        }
        readerThread.start()

        let workers = (0..<options.threads).map { _ in
            Thread { [self] in
                let interners = ClaimInterners()
                while let batch = work.pop() {
                    done.put(batch.sequence, process(batch, cache: cache, findReplays: findReplays, interners: interners))
                }
            }
        }
        for worker in workers { worker.start() }

        var summary = AuditSummary()
        summary.threads = options.threads
        summary.shard = options.shard
        var failure: Error?
        var writeFailed = false
        if let output, !options.format.header.isEmpty, !options.pipe {  // a pipe writes verdict lines only
            do { try output.write(Array(options.format.header.utf8)) } catch { failure = error; writeFailed = true; cancelled.set() }
        }
        var lastProgress = 0.0
        var sequence = 0
        var lastBatch: (bytes: Int64, lines: Int) = (0, 0)
        while let batch = done.take(sequence) {
            sequence += 1
            defer { inFlight.signal() }
            guard failure == nil else { continue }
            // The workers' rendering stands unless the replay stage changed a verdict; only then is the batch's
            // output put together again.
            var rendered: [UInt8] = []
            var changed = false
            var start = 0
            if replay == nil {
                // No verdict can change: the results are read in place, not copied one by one.
                batch.results.withUnsafeBufferPointer { results in
                    for k in results.indices {
                        summary.add(results[k])
                        onResult?(results[k])
                    }
                }
            } else {
                for k in batch.results.indices {
                    let end = batch.ends[k]
                    var result = batch.results[k]
                    let wasValid = result.isValid
                    if result.isValid, let replay, let entry = result.replayEntry, failure == nil {
                        do throws(TokenError) {
                            if let first = try replay.record(entry, line: result.line, at: result.at) {
                                result.firstSeenLine = first
                                result.error = TokenError(.replayed, claim: nil, AuditEngine.replayMessage(first))
                            }
                        } catch {
                            // Without answers from the replay store, no verdict after this point would mean anything.
                            failure = AuditOutputError("the replay store could not answer at line \(result.line): \(error.message)")
                            cancelled.set()
                            if !changed {
                                // Only the records before this one are written.
                                changed = true
                                rendered.append(contentsOf: batch.rendered[..<start])
                            }
                            break
                        }
                    }
                    if result.isValid != wasValid, output != nil {
                        if !changed {
                            changed = true
                            rendered.reserveCapacity(batch.rendered.count + 256)
                            rendered.append(contentsOf: batch.rendered[..<start])
                        }
                        // What comes before the record's own line (a pipe's blank lines) stays.
                        rendered.append(contentsOf: batch.rendered[start..<batch.starts[k]])
                        options.format.render(result, into: &rendered)
                    } else if changed {
                        rendered.append(contentsOf: batch.rendered[start..<end])
                    }
                    start = end
                    summary.add(result)
                    onResult?(result)
                }
            }
            summary.blankLines += batch.blankLines
            summary.verifications += batch.verifications
            summary.cacheHits += batch.cacheHits
            summary.lines = batch.linesRead
            lastBatch = (batch.bytesRead, batch.linesRead)
            if let output {
                do {
                    try output.write(changed ? rendered : batch.rendered)
                    if options.pipe { try output.flush() }
                } catch { failure = error; writeFailed = true; cancelled.set() }
            }
            if let progress {
                let now = elapsed()
                if now - lastProgress >= options.progressInterval {
                    lastProgress = now
                    progress(AuditProgress(records: summary.records, lines: batch.linesRead, elapsedSeconds: now,
                                           bytesRead: batch.bytesRead, totalBytes: totalBytes))
                }
            }
        }
        // Every batch has been taken, so the reader thread has finished with the reader (the reorder buffer's lock
        // orders its last writes before this read).
        summary.inputError = reader.value.inputError
        summary.lines = max(summary.lines, reader.value.linesRead)
        // What was judged before a replay-store failure is still written out.
        if let output, !writeFailed {
            do { try output.flush() } catch { failure = failure ?? error }
        }
        summary.elapsedSeconds = elapsed()
        summary.cpuSeconds = Double(clock() - startedCPU) / Double(CLOCKS_PER_SEC)
        progress?(AuditProgress(records: summary.records, lines: summary.lines, elapsedSeconds: summary.elapsedSeconds,
                                bytesRead: max(lastBatch.bytes, reader.value.bytesConsumed), totalBytes: totalBytes))
        if let failure { throw failure }
        return summary
    }

    static func replayMessage(_ first: Int) -> String {
        first > 0 ? "this token was already accepted on line \(first); each token is accepted once"
                  : "the replay store already holds this token (accepted earlier, by this or another process); each token is accepted once"
    }

    // MARK: Workers

    struct Batch: Sendable {
        let sequence: Int
        let lines: [RawLine]
        let bytesRead: Int64
        let linesRead: Int
    }

    struct Processed: Sendable {
        var results: [AuditResult] = []
        /// Each result's output line, concatenated; `ends[k]` is where result k's line ends.
        var rendered: [UInt8] = []
        var ends: [Int] = []
        /// Where result k's line starts (after the blank lines a pipe reports before it).
        var starts: [Int] = []
        var blankLines = 0
        var verifications = 0
        var cacheHits = 0
        let bytesRead: Int64
        let linesRead: Int
    }

    private func process(_ batch: Batch, cache: VerdictCache, findReplays: Bool, interners: ClaimInterners) -> Processed {
        var out = Processed(bytesRead: batch.bytesRead, linesRead: batch.linesRead)
        out.results.reserveCapacity(batch.lines.count)
        out.ends.reserveCapacity(batch.lines.count)
        out.starts.reserveCapacity(batch.lines.count)
        out.rendered.reserveCapacity(batch.lines.count * 480)
        for line in batch.lines {
            guard let record = extractor.extract(line) else {
                out.blankLines += 1
                // In a pipe every line gets its line out: a blank one is reported, not skipped.
                if options.pipe { options.format.renderBlank(line: line.number, at: options.defaultTime, into: &out.rendered) }
                continue
            }
            let result = judge(record, cache: cache, findReplays: findReplays, interners: interners, counts: &out)
            out.starts.append(out.rendered.count)
            options.format.render(result, into: &out.rendered)
            // Moved into the batch, not copied (a copy costs a retain and a release of each of its references).
            out.results.append(consume result)
            out.ends.append(out.rendered.count)
        }
        return out
    }

    /// Judges one record: from the cache when the same token (and nonce) was judged for a time in the same
    /// interval between its time thresholds, by the judge otherwise.
    func judge(_ record: AuditRecord, cache: VerdictCache, findReplays: Bool, interners: ClaimInterners,
               counts: inout Processed) -> AuditResult {
        let at = record.at ?? options.defaultTime
        guard let token = record.token, record.problem == nil else {
            return AuditResult(line: record.line, id: record.id, error: record.problem ?? TokenError(.malformed, "no token"),
                               claims: .none, at: at, signatureVerified: false, profile: nil)
        }
        let nonce = record.nonce ?? options.defaultNonce
        let hash = cache.isEnabled ? cache.hash(token: token, nonce: nonce) : 0
        var claimed = false
        if cache.isEnabled {
            switch cache.lookupOrClaim(hash, token: token, nonce: nonce, at: at) {
            case .hit(let verdict):
                counts.cacheHits += 1
                return AuditResult(line: record.line, id: record.id, error: verdict.error, claims: verdict.claims, at: at,
                                   signatureVerified: verdict.signatureVerified, profile: verdict.profile,
                                   replayEntry: verdict.replayEntry)
            case .judge(let claim):
                claimed = claim
            }
        }
        counts.verifications += 1
        let judgement = judge.judge(token, at: at, nonce: nonce)
        let claims = ReportedClaims(judgement: judgement, interning: interners)
        var replayEntry: ReplayEntry?
        if findReplays, judgement.isValid {
            replayEntry = AuditEngine.replayEntry(token: token, issuer: claims.issuer ?? "",
                                                  expires: claims.expires ?? at, leeway: judgement.leeway)
        }
        let verdict = VerdictCache.Verdict(error: judgement.error, claims: claims, signatureVerified: judgement.signatureVerified,
                                           profile: judgement.profile, replayEntry: replayEntry)
        if cache.isEnabled {
            let interval = judgement.interval(around: at, reported: claims)
            cache.insert(hash, token: token, nonce: nonce,
                         entry: VerdictCache.Entry(from: interval.from, until: interval.until, verdict: verdict),
                         releasing: claimed)
        }
        return AuditResult(line: record.line, id: record.id, error: verdict.error, claims: claims, at: at,
                           signatureVerified: verdict.signatureVerified, profile: verdict.profile, replayEntry: replayEntry)
    }

    /// The replay key of DESIGN §6: the issuer and the SHA-256 of the signed `header.payload` as received (the
    /// same for every form of one token, which an ECDSA signature segment is not), kept until `exp` + leeway.
    static func replayEntry(token: String, issuer: String, expires: Double, leeway: Double) -> ReplayEntry {
        let utf8 = token.utf8
        let signed = utf8.lastIndex(of: UInt8(ascii: ".")).map { utf8[..<$0] } ?? utf8[...]
        return ReplayEntry(issuer: issuer, tokenDigest: SHA256.hash(Array(signed)),
                           expiresAt: Int64((expires + leeway).rounded(.up)))
    }
}

/// Passes a non-Sendable value to another thread that uses it alone until it hands it back through a lock.
final class HandOff<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// A flag set once, read by other threads.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}
