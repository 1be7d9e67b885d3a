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
/// let engine = AuditEngine(verifier: verifier, options: AuditOptions(defaultTime: 1_767_225_600))
/// let summary = try engine.run(try FileByteSource(path: "tokens.log"), output: FileSink(handle: .standardOutput))
/// print(summary.json())
/// ```
///
/// One reader thread splits the input into lines and hands batches of lines to `options.threads` worker
/// threads. A worker extracts each record, verifies it with the ``MultiProfileVerifier`` against its fixed key
/// sets (or takes its verdict from the ``VerdictCache``), renders its output line, and counts the batch's results
/// into a summary of the batch. The calling thread puts the batches back in order, runs the replay stage, merges
/// each batch's count into the summary (or, when that would not be exact, adds its results one by one), writes
/// the output and hands each batch back to its worker to be freed. At most `threads × batchesPerThread` batches
/// are in flight, so memory does not grow with the input: a batch holds at most `batchLines` lines and about
/// `batchBytes` bytes.
package final class AuditEngine: @unchecked Sendable {
    /// Judges every record: its profiles' key sets are fixed for the whole audit (``StaticKeySource``), so that
    /// every record is judged against the same keys.
    package let verifier: MultiProfileVerifier
    package let options: AuditOptions
    private let extractor = RecordExtractor()

    package init(verifier: MultiProfileVerifier, options: AuditOptions) {
        self.verifier = verifier
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
    /// - Throws: ``AuditError`` when writing the output fails or the replay stage cannot answer (a replay
    ///   store that is down); the audit stops there.
    package func run(_ input: any ByteSource, output: (any AuditSink)? = nil, replay: (any ReplayDetector)? = nil,
                    onResult: ((AuditResult) -> Void)? = nil,
                    progress: ((AuditProgress) -> Void)? = nil) throws(AuditError) -> AuditSummary {
        let clock = RunClock()
        let reader = HandOff(LineReader(input, maxLineBytes: options.maxLineBytes, firstLine: options.firstLine))
        let pipeline = Pipeline(inFlight: options.threads * options.batchesPerThread, workers: options.threads)
        // Sixteen shards a worker (each shard holding at least 32 tokens): every record takes its shard's lock twice,
        // and with a fixed sixteen, sixteen workers often met on a lock (on a 16-core Xeon, 256 ran a fifth faster).
        let cache = VerdictCache(capacity: options.cacheCapacity,
                                 shards: min(max(16, options.threads * 16), max(16, options.cacheCapacity / 32)))
        startReader(reader, pipeline)
        startWorkers(pipeline, cache: cache, findReplays: replay != nil)

        var consumer = OrderedConsumer(format: options.format, progressInterval: options.progressInterval, output: output,
                                       replay: replay, onResult: onResult, progress: progress, cancelled: pipeline.cancelled,
                                       totalBytes: reader.value.totalBytes, clock: clock, flushesEachBatch: options.pipe)
        consumer.summary.threads = options.threads
        consumer.summary.shard = options.shard
        if !options.pipe { consumer.writeHeader() }  // a pipe writes verdict lines only
        var sequence = 0
        while let batch = pipeline.done.take(sequence) {
            sequence += 1
            defer { pipeline.inFlight.signal() }
            consumer.consume(batch)
            // Freed by the worker that allocated it (see ``SpentBatches``).
            pipeline.spent[batch.worker].put(batch)
        }
        // Every batch has been taken, so the reader thread has finished with the reader (the reorder buffer's lock
        // orders its last writes before this read).
        let summary = Result { () throws(AuditError) in try consumer.finish(reader.value) }
        // The workers stop once the reader has closed the queue and they have judged what it held; what the run
        // allocated (the verdict cache, the last batches handed back) is freed before it returns, not whenever
        // the threads' objects go.
        pipeline.workersRunning.wait()
        var scratch: [Processed] = []
        for spent in pipeline.spent { spent.release(using: &scratch) }
        withExtendedLifetime(cache) {}
        return try summary.get()
    }

    // MARK: Reader, workers, ordered consumer

    /// What the reader, the workers and the consumer share: batches to judge, judged batches to put back in
    /// order, consumed batches on their way back to their workers, the bound on batches in flight, and the flag
    /// that stops the reader.
    final class Pipeline: Sendable {
        let work = BlockingQueue<Batch>()
        let done = ReorderBuffer<Processed>()
        /// One for each worker.
        let spent: [SpentBatches]
        let inFlight: DispatchSemaphore
        let cancelled = Flag()
        /// Entered by each worker before it starts and left when it has stopped.
        let workersRunning = DispatchGroup()

        init(inFlight: Int, workers: Int) {
            self.inFlight = DispatchSemaphore(value: inFlight)
            self.spent = (0..<workers).map { _ in SpentBatches() }
        }
    }

    /// Judged batches the consumer is done with, on their way back to the worker that judged them, which frees
    /// them before it takes its next batch. A batch's results (strings, claims, its rendered output) were
    /// allocated by that worker; freed by the consumer, each free would go into the worker's malloc arena and take
    /// its lock, against the worker's own allocations, and the consumer is the audit's one serial stage.
    final class SpentBatches: @unchecked Sendable {
        private let lock = NSLock()
        private var batches: [Processed] = []

        func put(_ batch: consuming Processed) {
            lock.lock()
            batches.append(batch)
            lock.unlock()
        }

        /// Frees the batches handed back so far. `scratch` is the worker's own list, swapped with this one so
        /// that neither reallocates and nothing is freed under the lock.
        func release(using scratch: inout [Processed]) {
            lock.lock()
            swap(&scratch, &batches)
            lock.unlock()
            scratch.removeAll(keepingCapacity: true)
        }
    }

    /// The reader thread: splits the input into batches of lines (at most `batchLines` lines, about
    /// `batchBytes` bytes), waiting for room when too many are in flight.
    private func startReader(_ reader: HandOff<LineReader>, _ pipeline: Pipeline) {
        let thread = Thread { [options] in
            var sequence = 0
            var lines: [RawLine] = []
            var bytes = 0
            func send() {
                pipeline.inFlight.wait()
                pipeline.work.push(Batch(sequence: sequence, lines: lines, bytesRead: reader.value.bytesConsumed,
                                         linesRead: reader.value.linesRead))
                sequence += 1
                lines = []
                bytes = 0
            }
            let shard = options.shard
            // The stop flag is read once a batch, when a batch starts, not once a line: it takes a lock, and a
            // stopped audit only needs the reader to stop handing out work soon.
            while !lines.isEmpty || !pipeline.cancelled.isSet, let line = reader.value.next() {
                // Another shard's line: skipped before any parsing, so it costs only the split.
                if let shard, !shard.contains(line: line.number) { continue }
                bytes += line.bytes.count + 64
                lines.append(line)
                if lines.count >= options.batchLines || bytes >= options.batchBytes { send() }
                // A pipe's reader never holds lines back while it waits for more input: a consumer that answers
                // line by line gets its answers.
                else if options.pipe && !reader.value.hasBufferedInput { send() }
            }
            if !lines.isEmpty && !pipeline.cancelled.isSet { send() }
            pipeline.done.finish(count: sequence)
            pipeline.work.close()
        }
        thread.start()
    }

    /// `options.threads` worker threads: each extracts, judges (or finds in the shared verdict cache) and renders
    /// the records of the batches it takes.
    /// The run keeps `cache` alive until every worker has stopped (``Pipeline/workersRunning``), so the workers
    /// hold it without a reference of their own: it goes when the run ends.
    private func startWorkers(_ pipeline: Pipeline, cache: VerdictCache, findReplays: Bool) {
        for worker in 0..<options.threads {
            pipeline.workersRunning.enter()
            Thread { [self, unowned(unsafe) cache] in
                defer { pipeline.workersRunning.leave() }
                let interners = ClaimInterners()
                let signatures = SignatureBatch(implementation: options.signatures)
                // Each worker but the first judges with a replica of the verifier: every token retains and releases
                // its profile's and keys' objects, and a reference count that workers on several cores share moves
                // its cache line between them on every change (on a 16-core Xeon, a third of the batch path's rate).
                let verifier = worker == 0 ? self.verifier : self.verifier.replica()
                let spent = pipeline.spent[worker]
                var scratch: [Processed] = []
                // The widths this worker's last batch ended its timelines at, where the next batch's start (see
                // process).
                var widths = TimelineWidths()
                while let batch = pipeline.work.pop() {
                    spent.release(using: &scratch)
                    var processed = process(batch, verifier: verifier, cache: cache, findReplays: findReplays,
                                            interners: interners, signatures: signatures, widths: widths)
                    if let summary = processed.summary {
                        widths = TimelineWidths(verdicts: summary.verdictTimeline.width, keys: summary.keyTimeline.width)
                    }
                    processed.worker = worker
                    pipeline.done.put(batch.sequence, processed)
                }
                spent.release(using: &scratch)
            }.start()
        }
    }

    /// The wall and CPU time of one run.
    struct RunClock {
        let started = DispatchTime.now().uptimeNanoseconds
        let startedCPU = clock()

        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        func cpuSeconds() -> Double { Double(clock() - startedCPU) / Double(CLOCKS_PER_SEC) }
    }

    /// The calling thread's part: takes the judged batches in input order, runs the replay stage, adds each
    /// result to the summary, writes the output and reports progress. After a failure (output or replay store)
    /// it takes the remaining batches without looking at them, so that the reader and workers can finish.
    struct OrderedConsumer {
        let format: OutputFormat
        let progressInterval: Double
        let output: (any AuditSink)?
        let replay: (any ReplayDetector)?
        let onResult: ((AuditResult) -> Void)?
        let progress: ((AuditProgress) -> Void)?
        let cancelled: Flag
        let totalBytes: Int64?
        let clock: RunClock
        var summary = AuditSummary()
        /// Pipe mode: the output is flushed after every batch, so that a consumer waiting for answers gets them.
        let flushesEachBatch: Bool
        private var failure: AuditError?
        private var writeFailed = false
        private var lastProgress = 0.0
        private var lastBatch: (bytes: Int64, lines: Int) = (0, 0)

        init(format: OutputFormat, progressInterval: Double, output: (any AuditSink)?, replay: (any ReplayDetector)?,
             onResult: ((AuditResult) -> Void)?, progress: ((AuditProgress) -> Void)?, cancelled: Flag, totalBytes: Int64?,
             clock: RunClock, flushesEachBatch: Bool = false) {
            self.format = format
            self.progressInterval = progressInterval
            self.output = output
            self.replay = replay
            self.onResult = onResult
            self.progress = progress
            self.cancelled = cancelled
            self.totalBytes = totalBytes
            self.clock = clock
            self.flushesEachBatch = flushesEachBatch
        }

        mutating func writeHeader() {
            guard let output, !format.header.isEmpty else { return }
            do throws(AuditError) { try output.write(Array(format.header.utf8)) } catch { fail(writing: error) }
        }

        private mutating func fail(writing error: AuditError) {
            failure = error
            writeFailed = true
            cancelled.set()
        }

        mutating func consume(_ batch: Processed) {
            guard failure == nil else { return }
            // The workers' rendering stands unless the replay stage changed a verdict; only then is the batch's
            // output put together again.
            var rerendered: [UInt8]?
            if let replay {
                rerendered = applyReplays(batch, replay)
            } else {
                // No verdict can change: the worker's count of the batch is merged when that is exact, and the
                // results are read in place, not copied one by one.
                let counted = batch.summary.map { summary.absorb(batch: $0) } ?? false
                if !counted || onResult != nil {
                    batch.results.withUnsafeBufferPointer { results in
                        for k in results.indices {
                            if !counted { summary.add(results[k]) }
                            onResult?(results[k])
                        }
                    }
                }
            }
            summary.blankLines += batch.blankLines
            summary.verifications += batch.verifications
            summary.cacheHits += batch.cacheHits
            summary.lines = batch.linesRead
            lastBatch = (batch.bytesRead, batch.linesRead)
            if let output {
                do throws(AuditError) {
                    try output.write(rerendered ?? batch.rendered)
                    if flushesEachBatch { try output.flush() }
                } catch { fail(writing: error) }
            }
            if let progress {
                let now = clock.elapsed()
                if now - lastProgress >= progressInterval {
                    lastProgress = now
                    progress(AuditProgress(records: summary.records, lines: batch.linesRead, elapsedSeconds: now,
                                           bytesRead: batch.bytesRead, totalBytes: totalBytes))
                }
            }
        }

        /// Runs the replay stage over a batch's valid results and adds every result to the summary. Returns the
        /// batch's output again when a verdict changed (or the replay store failed part-way: the records before the
        /// failure only); nil when the workers' rendering stands.
        private mutating func applyReplays(_ batch: Processed, _ replay: any ReplayDetector) -> [UInt8]? {
            var rendered: [UInt8] = []
            var changed = false
            var start = 0
            for k in batch.results.indices {
                let end = batch.ends[k]
                var result = batch.results[k]
                let wasValid = result.isValid
                if result.isValid, let entry = result.replayEntry, failure == nil {
                    do throws(TokenError) {
                        if let first = try replay.record(entry, line: result.line, at: result.at) {
                            result.markReplayed(firstSeenLine: first, TokenError(.replayed, claim: nil, AuditEngine.replayMessage(first)))
                        }
                    } catch {
                        // Without answers from the replay store, no verdict after this point would mean anything.
                        failure = AuditError("stopped at line \(result.line): \(error.message)")
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
                    format.render(result, into: &rendered)
                } else if changed {
                    rendered.append(contentsOf: batch.rendered[start..<end])
                }
                start = end
                summary.add(result)
                onResult?(result)
            }
            return changed ? rendered : nil
        }

        /// The summary once every batch is in: the input's error if any, the times, the last progress report.
        /// - Throws: the first failure (output or replay store), after flushing what was written before it.
        mutating func finish(_ reader: LineReader) throws(AuditError) -> AuditSummary {
            summary.inputError = reader.inputError
            summary.lines = max(summary.lines, reader.linesRead)
            // What was judged before a replay-store failure is still written out.
            if let output, !writeFailed {
                do throws(AuditError) { try output.flush() } catch { failure = failure ?? error }
            }
            summary.elapsedSeconds = clock.elapsed()
            summary.cpuSeconds = clock.cpuSeconds()
            progress?(AuditProgress(records: summary.records, lines: summary.lines, elapsedSeconds: summary.elapsedSeconds,
                                    bytesRead: max(lastBatch.bytes, reader.bytesConsumed), totalBytes: totalBytes))
            if let failure { throw failure }
            return summary
        }
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
        /// The worker that judged the batch, which frees it once it is consumed.
        var worker = 0
        /// The results counted by the worker (``AuditSummary/absorb(batch:)``); nil when a replay stage may still
        /// change verdicts.
        var summary: AuditSummary?
    }

    /// Where the first pass over a batch left a line. A record is referred to by its place in the batch's record
    /// column, never copied: a copy of an ``AuditRecord`` retains and releases each of its strings.
    private enum Gathered {
        /// A blank line (reported in a pipe, skipped otherwise).
        case blank(line: Int)
        /// Answered already: a line without a token, or a verdict from the cache.
        case answered(AuditResult)
        /// Verified with the batch: its ``Verifying`` entry says which record, and its verdict-cache hash and claim.
        case verifying
        /// The same token as an earlier record of this batch, or one another worker is judging: looked up again
        /// once the batch's verdicts are in the cache.
        case later(record: Int)
    }

    /// Judges a batch's records in three passes: every record extracted and looked up in the verdict cache; the
    /// rest verified together (``MultiProfileVerifier/evaluate(count:signatures:prepared:_:)``: eight RS256 signatures at a time on a CPU
    /// with AVX-512 IFMA); then, in input order, each verdict cached and rendered. A worker never waits on another
    /// while it holds claims of its own: a token another worker is judging is looked up again in the last pass.
    /// The bucket widths a worker's batch summaries start their timelines at.
    struct TimelineWidths {
        var verdicts: Double = 60
        var keys: Double = 60
    }

    /// - Parameter widths: where the batch's summary starts its timelines: the widths the worker's previous batch
    ///   ended at, not a minute, so that each batch does not coarsen its timelines again from a minute up (and grow
    ///   rows it then merges). Each such width was needed by records of the same input, so the summary the consumer
    ///   merges the batches into reaches the same width either way, and the same counts.
    private func process(_ batch: Batch, verifier: MultiProfileVerifier, cache: VerdictCache, findReplays: Bool,
                         interners: ClaimInterners, signatures: SignatureBatch, widths: TimelineWidths) -> Processed {
        var out = Processed(bytesRead: batch.bytesRead, linesRead: batch.linesRead)
        if !findReplays {
            var summary = AuditSummary()
            summary.verdictTimeline.width = widths.verdicts
            summary.keyTimeline.width = widths.keys
            out.summary = summary
        }
        let count = batch.lines.count
        out.results.reserveCapacity(count)
        out.ends.reserveCapacity(count)
        out.starts.reserveCapacity(count)
        out.rendered.reserveCapacity(count * 480)
        var gathered: [Gathered] = []
        gathered.reserveCapacity(count)
        var records: [AuditRecord] = []
        records.reserveCapacity(count)
        // What each token to verify is verified with; its bytes are its record's.
        var entries: [Verifying] = []
        entries.reserveCapacity(count)
        batch.lines.withUnsafeBufferPointer { lines in
            for k in lines.indices {
                guard let record = extractor.extract(lines[k]) else {
                    gathered.append(.blank(line: lines[k].number))
                    continue
                }
                switch lookup(record, cache: cache, defersBusy: true, counts: &out) {
                case .answered(let result): gathered.append(.answered(result))
                case .later:
                    gathered.append(.later(record: records.count))
                    records.append(record)
                case .verify(let at, let nonce, let hash, let claimed, let fresh):
                    gathered.append(.verifying)
                    entries.append(Verifying(record: records.count, position: gathered.count - 1, at: at, nonce: nonce, hash: hash,
                                             claimed: claimed, fresh: fresh))
                    records.append(record)
                }
            }
        }
        // The verified records' verdicts go into the cache first, releasing every claim this worker holds; only then
        // does it wait for verdicts other workers are judging, so that no two workers ever wait on each other. Each
        // verdict replaces its line's `.verifying` in `gathered`, so the batch keeps no second column of optional
        // results (164 instructions a record to allocate, fill with nil and destroy).
        if !entries.isEmpty {
            records.withUnsafeBufferPointer { records in
                // Each token is split from its line's bytes (TokenBytes), which the split copies: no String a token.
                verifier.evaluate(count: entries.count, signatures: signatures, prepared: { entry in
                    records[entries[entry].record].tokenBytes!.withUnsafeBytes { token in
                        verifier.prepare(TokenBytes(token), now: entries[entry].at, nonce: entries[entry].nonce, profile: nil,
                                         reportsRefusals: true)
                    }
                }) { entry, outcome in
                    // What the first pass found is read from the entry: reading the line's `.verifying` back would copy
                    // the whole enum out of the column and destroy it again.
                    let position = entries[entry].position, record = entries[entry].record
                    gathered[position] = .answered(conclude(records[record], outcome, hash: entries[entry].hash,
                                                            claimed: entries[entry].claimed, fresh: entries[entry].fresh,
                                                            cache: cache, findReplays: findReplays, interners: interners,
                                                            counts: &out))
                }
            }
        }
        for k in gathered.indices {
            let result: AuditResult
            switch gathered[k] {
            case .blank(let line):
                out.blankLines += 1
                // In a pipe every line gets its line out: a blank one is reported, not skipped.
                if options.pipe { options.format.renderBlank(line: line, at: options.defaultTime, into: &out.rendered) }
                continue
            case .answered:
                // Moved out of the column (a copy would retain and release each of the result's references).
                guard case .answered(let answered) = exchange(&gathered[k], with: .blank(line: 0)) else { continue }
                result = answered
            case .verifying:
                // MultiProfileVerifier.evaluate(count:signatures:prepared:_:) gives every entry its verdict once.
                preconditionFailure("a record of the batch was verified without a verdict")
            case .later(let record):
                result = records.withUnsafeBufferPointer { records in
                    judge(records[record], verifier: verifier, cache: cache, findReplays: findReplays, interners: interners,
                          counts: &out)
                }
            }
            out.starts.append(out.rendered.count)
            options.format.render(result, into: &out.rendered)
            out.summary?.add(result)
            // Moved into the batch, not copied (a copy costs a retain and a release of each of its references).
            out.results.append(consume result)
            out.ends.append(out.rendered.count)
        }
        return out
    }

    /// A record whose token the batch verifies, at `at` with `nonce`: its place in the record column and in
    /// `gathered`, and its verdict-cache hash and claim (see ``VerdictCache/Lookup``).
    private struct Verifying {
        let record: Int
        let position: Int
        let at: Double
        let nonce: Nonce?
        let hash: UInt64
        let claimed: Bool
        let fresh: Bool
    }

    /// What the verdict cache said about a record.
    private enum Lookup {
        case answered(AuditResult)
        /// To verify at `at` with `nonce`; `claimed`: other workers wait for the verdict; `fresh`: the cache held
        /// no verdict of the token (see ``VerdictCache/insert(_:token:nonce:entry:releasing:fresh:)``).
        case verify(at: Double, nonce: Nonce?, hash: UInt64, claimed: Bool, fresh: Bool)
        /// Another worker is judging the same token (only when `defersBusy`).
        case later
    }

    /// A record's verdict from the cache when the same token (and nonce) was judged for a time in the same interval
    /// between its time thresholds; otherwise what to verify. With `defersBusy` it never waits for another worker
    /// (``Lookup/later`` instead); without, it waits for the verdict another worker is judging (single flight), as
    /// only a worker that holds no claim may.
    private func lookup(_ record: borrowing AuditRecord, cache: VerdictCache, defersBusy: Bool, counts: inout Processed) -> Lookup {
        let at = record.at ?? options.defaultTime
        guard let token = record.tokenBytes, record.problem == nil else {
            return .answered(AuditResult(line: record.line, id: record.id, error: record.problem ?? TokenError(.malformed, "no token"),
                                         claims: .none, at: at, signatureVerified: false, profile: nil))
        }
        let nonce = record.nonce ?? options.defaultNonce
        guard cache.isEnabled else { return .verify(at: at, nonce: nonce.map { Nonce($0) }, hash: 0, claimed: false, fresh: false) }
        let hash = cache.hash(token: token, nonce: nonce)
        switch cache.lookupOrClaim(hash, token: token, nonce: nonce, at: at, waits: !defersBusy) {
        case .hit(let verdict):
            counts.cacheHits += 1
            return .answered(AuditResult(line: record.line, id: record.id, at: at, verdict: verdict))
        case .judge(let claimed, let fresh):
            return .verify(at: at, nonce: nonce.map { Nonce($0) }, hash: hash, claimed: claimed, fresh: fresh)
        case .busy:
            return .later
        }
    }

    /// A verified record's result: its verdict cached (releasing the claim, if it held one) and reported.
    private func conclude(_ record: borrowing AuditRecord, _ outcome: borrowing ProfileVerification, hash: UInt64, claimed: Bool,
                          fresh: Bool, cache: VerdictCache,
                          findReplays: Bool, interners: ClaimInterners, counts: inout Processed) -> AuditResult {
        counts.verifications += 1
        let at = record.at ?? options.defaultTime
        let token = record.tokenBytes!
        let claims = ReportedClaims(outcome, interning: interners)
        let replayEntry = findReplays ? outcome.replayEntry(ofBytes: token) : nil
        let verdict = VerdictCache.Verdict(error: outcome.error, claims: claims, signatureVerified: outcome.signatureVerified,
                                           profile: outcome.profile, replayEntry: replayEntry)
        if cache.isEnabled {
            let interval = outcome.interval(around: at)
            cache.insert(hash, token: token, nonce: record.nonce ?? options.defaultNonce,
                         entry: VerdictCache.Entry(from: interval.from, until: interval.until, verdict: verdict),
                         releasing: claimed, fresh: fresh)
        }
        return AuditResult(line: record.line, id: record.id, at: at, verdict: verdict)
    }

    /// Judges one record on its own: from the cache (waiting for a verdict another worker is judging), or verified
    /// by itself. The caller holds no claim.
    func judge(_ record: borrowing AuditRecord, verifier: MultiProfileVerifier, cache: VerdictCache, findReplays: Bool,
               interners: ClaimInterners, counts: inout Processed) -> AuditResult {
        switch lookup(record, cache: cache, defersBusy: false, counts: &counts) {
        case .answered(let result): return result
        case .later: preconditionFailure("a lookup that waits never answers later")
        case .verify(let at, let nonce, let hash, let claimed, let fresh):
            let outcome = record.tokenBytes!.withUnsafeBytes { token in
                verifier.step(TokenBytes(token), now: at, nonce: nonce, profile: nil, reportsRefusals: true).now()
            }
            return conclude(record, outcome, hash: hash, claimed: claimed, fresh: fresh, cache: cache, findReplays: findReplays,
                            interners: interners, counts: &counts)
        }
    }
}

/// Passes a value that is not Sendable to another thread, which alone uses it from then on (or until it hands it
/// back through a lock): the audit's reader, sinks and summary, and the command line's output.
package final class HandOff<Value>: @unchecked Sendable {
    package let value: Value
    package init(_ value: Value) { self.value = value }
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
