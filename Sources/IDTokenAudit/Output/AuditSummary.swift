import IDTokenKit

/// What an audit found, over all records: totals, counts by error code, issuer, audience and key, each key's
/// first and last use, replays, tokens used after expiry, throughput, and the time series the HTML report plots.
///
/// Memory is bounded whatever the log's size: distinct issuers, audiences and keys are capped
/// (``BoundedCounter``), examples are capped at ``exampleLimit``, time series at ``Timeline/maxBuckets``.
public struct AuditSummary: Sendable {
    public static let exampleLimit = 100

    /// Lines read, blank ones included.
    public internal(set) var lines = 0
    /// Records judged: every non-blank line.
    public internal(set) var records = 0
    /// Blank lines, skipped.
    public internal(set) var blankLines = 0
    public internal(set) var valid = 0
    public internal(set) var invalid = 0
    /// Records by error code (raw value), for the invalid ones.
    public internal(set) var byError: [String: Int] = [:]
    /// Records by the token's `iss` (whatever the verdict; unverified for refused tokens).
    public internal(set) var byIssuer = BoundedCounter()
    /// Records by each `aud` value the token names.
    public internal(set) var byAudience = BoundedCounter()
    /// Records by the header's `kid`.
    public internal(set) var byKid = BoundedCounter()
    /// Records by the profile that judged them.
    public internal(set) var byProfile = BoundedCounter(limit: 64)
    /// For each key whose signature verified at least once: how often, and its first and last use by `at`.
    public internal(set) var keyUsage: [String: KeyUsage] = [:]
    /// Tokens presented again after their first acceptance (with `--replay` or a replay store).
    public internal(set) var replays = 0
    public internal(set) var replayExamples: [ReplayExample] = []
    /// Genuine tokens (signature verified) presented after `exp` + leeway: code `expired`.
    public internal(set) var usedAfterExpiry = 0
    public internal(set) var expiredExamples: [ExpiredExample] = []
    /// The earliest and latest `at` of all records.
    public internal(set) var firstAt: Double?
    public internal(set) var lastAt: Double?
    /// Tokens verified by a judge; the rest were answered from the verdict cache or were unreadable lines.
    public internal(set) var verifications = 0
    public internal(set) var cacheHits = 0
    public internal(set) var threads = 1
    public internal(set) var elapsedSeconds = 0.0
    /// Processor time the whole process used during the audit (every thread), for rates on a shared machine.
    public internal(set) var cpuSeconds = 0.0
    /// Why the input could not be read to its end, if so. The records before that point were audited.
    public internal(set) var inputError: AuditInputError?
    /// The shard this summary covers, when the audit was one shard of several (``Shard``).
    public internal(set) var shard: Shard?
    /// The run the shard belongs to (`--run-id`): merged summaries must share it.
    public var runID: String?
    /// Which run of the shard this is (a shard may be run again): the run's shared replay record names the
    /// attempt whose claims a later shard overturned, so that `merge` settles only this summary's verdicts.
    public var shardAttempt: String?
    /// Records judged without the shared replay check, because the replay store could not answer and the
    /// failure mode said to go on.
    public var replayUnchecked = 0
    /// Verdicts per time bucket of `at`: series "valid" and one per error code.
    public internal(set) var verdictTimeline = Timeline(series: ["valid"] + TokenError.Code.allCases.map(\.rawValue))
    /// Signature-verified uses per time bucket of `at`, one series per `kid`.
    public internal(set) var keyTimeline = Timeline(series: [], maxSeries: 32)

    public struct KeyUsage: Sendable, Equatable {
        public internal(set) var uses: Int
        public internal(set) var firstUse: Double
        public internal(set) var lastUse: Double
        public internal(set) var issuer: String?
    }

    public struct ReplayExample: Sendable, Equatable {
        public let line: Int
        /// The line of the first acceptance; 0 when a shared store knew the token from elsewhere.
        public let firstLine: Int
        public let issuer: String?
        public let subject: String?
        public let at: Double
    }

    public struct ExpiredExample: Sendable, Equatable {
        public let line: Int
        public let issuer: String?
        public let subject: String?
        public let expires: Double
        public let at: Double
    }

    /// The keys counted last in ``keyUsage``, where they are and their ``keyTimeline`` series: a log uses a
    /// handful of keys, mostly through the very strings counted before, which compare equal without hashing.
    /// Emptied whenever `keyUsage` gains a key (its indices may then move).
    private var recentKeys: [(kid: String, index: Dictionary<String, KeyUsage>.Index, series: Int?)] = []

    public init() {}

    /// Records per second of wall time.
    public var tokensPerSecond: Double { elapsedSeconds > 0 ? Double(records) / elapsedSeconds : 0 }

    /// Records per second of processor time (all threads).
    public var tokensPerCPUSecond: Double { cpuSeconds > 0 ? Double(records) / cpuSeconds : 0 }

    /// Adds one record's result.
    mutating func add(_ result: AuditResult) {
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
