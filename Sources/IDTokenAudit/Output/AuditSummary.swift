import IDTokenKit

/// What an audit found, over all records: totals, counts by error code, issuer, audience and key, each key's
/// first and last use, replays, tokens used after expiry, throughput, and the time series the HTML report plots.
///
/// Memory is bounded whatever the log's size: distinct issuers, audiences and keys are capped
/// (``BoundedCounter``), examples are capped at ``exampleLimit``, time series at ``Timeline/maxBuckets``.
package struct AuditSummary: Sendable {
    package static let exampleLimit = 100

    /// Lines read, blank ones included.
    package internal(set) var lines = 0
    /// Records judged: every non-blank line.
    package internal(set) var records = 0
    /// Blank lines, skipped.
    package internal(set) var blankLines = 0
    package internal(set) var valid = 0
    package internal(set) var invalid = 0
    /// Records by error code (raw value), for the invalid ones.
    package internal(set) var byError: [String: Int] = [:]
    /// Records by the token's `iss` (whatever the verdict; unverified for refused tokens).
    package internal(set) var byIssuer = BoundedCounter()
    /// Records by each `aud` value the token names.
    package internal(set) var byAudience = BoundedCounter()
    /// Records by the header's `kid`.
    package internal(set) var byKid = BoundedCounter()
    /// Records by the profile that judged them.
    package internal(set) var byProfile = BoundedCounter(limit: 64)
    /// For each key whose signature verified at least once: how often, and its first and last use by `at`.
    package internal(set) var keyUsage: [String: KeyUsage] = [:]
    /// Tokens presented again after their first acceptance (with `--replay` or a replay store).
    package internal(set) var replays = 0
    package internal(set) var replayExamples: [ReplayExample] = []
    /// Genuine tokens (signature verified) presented after `exp` + leeway: code `expired`.
    package internal(set) var usedAfterExpiry = 0
    package internal(set) var expiredExamples: [ExpiredExample] = []
    /// The earliest and latest `at` of all records.
    package internal(set) var firstAt: Double?
    package internal(set) var lastAt: Double?
    /// Tokens verified by a judge; the rest were answered from the verdict cache or were unreadable lines.
    package internal(set) var verifications = 0
    package internal(set) var cacheHits = 0
    package internal(set) var threads = 1
    package internal(set) var elapsedSeconds = 0.0
    /// Processor time the whole process used during the audit (every thread), for rates on a shared machine.
    package internal(set) var cpuSeconds = 0.0
    /// Why the input could not be read to its end, if so. The records before that point were audited.
    package internal(set) var inputError: AuditInputError?
    /// The shard this summary covers, when the audit was one shard of several (``Shard``).
    package internal(set) var shard: Shard?
    /// The run the shard belongs to (`--run-id`): merged summaries must share it.
    package var runID: String?
    /// Which run of the shard this is (a shard may be run again): the run's shared replay record names the
    /// attempt whose claims a later shard overturned, so that `merge` settles only this summary's verdicts.
    package var shardAttempt: String?
    /// Records judged without the shared replay check, because the replay store could not answer and the
    /// failure mode said to go on.
    package var replayUnchecked = 0
    /// Verdicts per time bucket of `at`: series "valid" and one per error code.
    package internal(set) var verdictTimeline = Timeline(series: ["valid"] + TokenError.Code.allCases.map(\.rawValue))
    /// Signature-verified uses per time bucket of `at`, one series per `kid`.
    package internal(set) var keyTimeline = Timeline(series: [], maxSeries: 32)

    package struct KeyUsage: Sendable, Equatable {
        package internal(set) var uses: Int
        package internal(set) var firstUse: Double
        package internal(set) var lastUse: Double
        package internal(set) var issuer: String?

        /// Adds the uses of the same key counted elsewhere (another batch, another shard); the issuer stays.
        mutating func absorb(_ other: KeyUsage) {
            uses += other.uses
            firstUse = min(firstUse, other.firstUse)
            lastUse = max(lastUse, other.lastUse)
        }
    }

    package struct ReplayExample: Sendable, Equatable {
        package let line: Int
        /// The line of the first acceptance; 0 when a shared store knew the token from elsewhere.
        package let firstLine: Int
        package let issuer: String?
        package let subject: String?
        package let at: Double
    }

    package struct ExpiredExample: Sendable, Equatable {
        package let line: Int
        package let issuer: String?
        package let subject: String?
        package let expires: Double
        package let at: Double
    }

    /// The keys counted last in ``keyUsage``, where they are and their ``keyTimeline`` series: a log uses a
    /// handful of keys, mostly through the very strings counted before, which compare equal without hashing.
    /// Emptied whenever `keyUsage` gains a key (its indices may then move).
    /// Internal, not private: merging a batch's summary (``absorb(batch:)``) empties it.
    var recentKeys: [(kid: String, index: Dictionary<String, KeyUsage>.Index, series: Int?)] = []

    package init() {}

    /// Records per second of wall time.
    package var tokensPerSecond: Double { elapsedSeconds > 0 ? Double(records) / elapsedSeconds : 0 }

    /// Records per second of processor time (all threads).
    package var tokensPerCPUSecond: Double { cpuSeconds > 0 ? Double(records) / cpuSeconds : 0 }

    /// Adds one record's result.
    package mutating func add(_ result: AuditResult) {
        records += 1
        if result.isValid { valid += 1 } else { invalid += 1 }
        let at = result.at
        firstAt = min(firstAt ?? at, at)
        lastAt = max(lastAt ?? at, at)
        if let error = result.error {
            byError[error.code.rawValue, default: 0] += 1
            verdictTimeline.add(at: at, series: 1 + AuditSummary.codeIndex[error.code]!)
            if error.code == .expired {
                usedAfterExpiry += 1
                if expiredExamples.count < AuditSummary.exampleLimit {
                    expiredExamples.append(ExpiredExample(line: result.line, issuer: result.claims.issuer, subject: result.claims.subject,
                                                          expires: result.claims.expires ?? 0, at: at))
                }
            }
            if error.code == .replayed, let first = result.firstSeenLine {
                replays += 1
                if replayExamples.count < AuditSummary.exampleLimit {
                    replayExamples.append(ReplayExample(line: result.line, firstLine: first, issuer: result.claims.issuer,
                                                        subject: result.claims.subject, at: at))
                }
            }
        } else {
            verdictTimeline.add(at: at, series: 0)
        }
        if let issuer = result.claims.issuer { byIssuer.add(issuer) }
        switch result.claims.audience {
        case .single(let value)?: byAudience.add(value)
        case .list(let values)?: for value in Set(values) { byAudience.add(value) }
        case nil: break
        }
        if let profile = result.profile { byProfile.add(profile) }
        if let kid = result.claims.kid {
            byKid.add(kid)
            if result.signatureVerified { countVerifiedUse(kid: kid, issuer: result.claims.issuer, at: at) }
        }
    }

    /// Counts a use of a key whose signature verified: in ``keyUsage`` and in ``keyTimeline``.
    private mutating func countVerifiedUse(kid: String, issuer: String?, at: Double) {
        // A recent key is found by reading the list in place (no retain of each string), its length first.
        let count = kid.utf8.count
        let known = recentKeys.withUnsafeBufferPointer { entries -> (index: Dictionary<String, KeyUsage>.Index, series: Int?)? in
            for k in entries.indices where entries[k].kid.utf8.count == count && entries[k].kid == kid {
                return (entries[k].index, entries[k].series)
            }
            return nil
        }
        if let known {
            use(at: known.index, at)
            if let series = known.series { keyTimeline.add(at: at, series: series) }
            return
        }
        if let index = keyUsage.index(forKey: kid) {
            use(at: index, at)
            // A key's series, once given or refused (the timeline was full), stays as it is.
            let series = keyTimeline.seriesIndex(kid)
            if recentKeys.count == 8 { recentKeys.removeFirst() }
            recentKeys.append((kid, index, series))
            if let series { keyTimeline.add(at: at, series: series) }
            return
        }
        if keyUsage.count < 1000 {
            keyUsage[kid] = KeyUsage(uses: 1, firstUse: at, lastUse: at, issuer: issuer)
            recentKeys.removeAll(keepingCapacity: true)
        }
        if let series = keyTimeline.seriesIndex(kid) { keyTimeline.add(at: at, series: series) }
    }

    private mutating func use(at index: Dictionary<String, KeyUsage>.Index, _ at: Double) {
        keyUsage.values[index].uses += 1
        keyUsage.values[index].firstUse = min(keyUsage.values[index].firstUse, at)
        keyUsage.values[index].lastUse = max(keyUsage.values[index].lastUse, at)
    }

    static let codeIndex: [TokenError.Code: Int] = Dictionary(uniqueKeysWithValues: TokenError.Code.allCases.enumerated().map { ($1, $0) })
}

extension AuditSummary {
    /// Adds the summary of the next batch of records, counted by the worker that judged them (``add(_:)`` on a
    /// summary of its own), when that gives exactly what adding the batch's results here one by one would: so
    /// that the ordered consumer, the audit's one serial stage, does not count every record itself.
    ///
    /// Counts, examples, times and the verdict timeline merge exactly in input order. The capped tables (issuers,
    /// audiences, key IDs, profiles, key usage, the key timeline's series) keep the values seen first, in input
    /// order; a merge settles that the same way only while none of them can fill. When one could, nothing is
    /// added and the result is false: the caller adds the batch's results one by one instead.
    /// - Parameter part: a summary of records only (no replay stage, no lines, threads or times).
    mutating func absorb(batch part: AuditSummary) -> Bool {
        func fits(_ mine: BoundedCounter, _ theirs: BoundedCounter) -> Bool {
            theirs.otherCount == 0 && mine.counts.count + theirs.counts.count <= mine.limit
        }
        guard fits(byIssuer, part.byIssuer), fits(byAudience, part.byAudience), fits(byKid, part.byKid),
              fits(byProfile, part.byProfile), keyUsage.count + part.keyUsage.count <= 1000,
              keyTimeline.series.count + part.keyTimeline.series.count <= keyTimeline.maxSeries,
              part.replays == 0 else { return false }
        records += part.records
        valid += part.valid
        invalid += part.invalid
        for (code, n) in part.byError { byError[code, default: 0] += n }
        byIssuer.absorb(part.byIssuer)
        byAudience.absorb(part.byAudience)
        byKid.absorb(part.byKid)
        byProfile.absorb(part.byProfile)
        for (kid, usage) in part.keyUsage {
            if let index = keyUsage.index(forKey: kid) {
                keyUsage.values[index].absorb(usage)
            } else {
                keyUsage[kid] = usage
            }
        }
        usedAfterExpiry += part.usedAfterExpiry
        expiredExamples += part.expiredExamples.prefix(AuditSummary.exampleLimit - expiredExamples.count)
        if let at = part.firstAt { firstAt = min(firstAt ?? at, at) }
        if let at = part.lastAt { lastAt = max(lastAt ?? at, at) }
        verdictTimeline.absorb(part.verdictTimeline)
        keyTimeline.absorb(part.keyTimeline)
        // Keys may have been added (moving the dictionary's indices) and given timeline series: the recent keys'
        // cached places are stale.
        recentKeys.removeAll(keepingCapacity: true)
        return true
    }
}
