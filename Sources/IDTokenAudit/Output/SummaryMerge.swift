import Foundation
import IDTokenKit

/// Combining the summaries of the shards of one audit (DESIGN §12, `idtoken audit merge`) into the summary one
/// process would have written for the whole input.
///
/// A shard's summary carries, besides the usual members, a `shard` member: the run id, the shard's index and
/// count, the lines it read (every shard reads the whole input, so all must agree), and the time series the HTML
/// report plots. Counts add up; keys keep the earliest first use and the latest last use; examples are the first
/// ``AuditSummary/exampleLimit`` by line over all shards (each shard's first ones by line include the merged
/// first ones). Work counters (`verifications`, `cacheHits`) add up but depend on how the log was split, and the
/// timing members describe the slowest shard (`elapsedSeconds`) and all shards together (`cpuSeconds`).
extension AuditSummary {
    /// The `shard` member of a shard's summary.
    func shardMember(_ shard: Shard) -> String {
        func timeline(_ t: Timeline) -> String {
            let names = t.series.map(JSONText.quoted).joined(separator: ", ")
            let rows = t.buckets.sorted { $0.key < $1.key }.map { bucket, counts in
                "[\(bucket), [" + counts.map(String.init).joined(separator: ",") + "]]"
            }.joined(separator: ", ")
            return "{\"width\": " + JSONText.number(t.width) + ", \"series\": [" + names + "], \"buckets\": [" + rows + "]}"
        }
        return "{\"run\": " + (runID.map(JSONText.quoted) ?? "null") + ", \"attempt\": " + (shardAttempt.map(JSONText.quoted) ?? "null")
            + ", \"index\": \(shard.index), \"count\": \(shard.count)"
            + ", \"lines\": \(lines), \"verdictTimeline\": " + timeline(verdictTimeline)
            + ", \"keyTimeline\": " + timeline(keyTimeline) + "}"
    }

    /// Reads a summary written by ``json()``: a shard's, with its `shard` member, to be merged.
    /// - Parameter name: how errors name the summary (its file name).
    package init(json text: String, name: String) throws(AuditError) {
        self.init()
        func bad(_ why: String) -> AuditError { AuditError("\(name): \(why)") }
        // The project's one reader of JSON documents (Jansson, through JOSE's JSONTree), as for the configuration
        // file: no Foundation JSON.
        guard let object = try? JSONTree.parse(text), object.objectMembers != nil else {
            throw bad("not a JSON summary of idtoken audit")
        }
        func int(_ value: JSONTree?) -> Int? { value?.int64.map { Int($0) } }
        func time(_ value: JSONTree?) -> Double? { value?.string.flatMap { UnixTime.parse($0) } }
        func counter(_ value: JSONTree?, limit: Int = 1000) -> BoundedCounter {
            var counter = BoundedCounter(limit: limit)
            for (key, count) in (value?.objectMembers ?? []).sorted(by: { $0.key < $1.key }) {
                guard let n = int(count) else { continue }
                if key == "(other)" { counter.otherCount += n } else { counter.add(key, n) }
            }
            return counter
        }
        guard let lines = int(object["lines"]), let records = int(object["records"]) else { throw bad("has no line and record counts") }
        self.lines = lines
        self.records = records
        blankLines = int(object["blankLines"]) ?? 0
        valid = int(object["valid"]) ?? 0
        invalid = int(object["invalid"]) ?? 0
        for (code, count) in object["byError"]?.objectMembers ?? [] { byError[code] = int(count) ?? 0 }
        byIssuer = counter(object["byIssuer"])
        byAudience = counter(object["byAudience"])
        byKid = counter(object["byKid"])
        byProfile = counter(object["byProfile"], limit: 64)
        for (kid, key) in object["keys"]?.objectMembers ?? [] {
            guard key.objectMembers != nil, let uses = int(key["uses"]), let first = time(key["firstUse"]),
                  let last = time(key["lastUse"]) else { throw bad("key \(kid) has no uses, firstUse or lastUse") }
            keyUsage[kid] = KeyUsage(uses: uses, firstUse: first, lastUse: last, issuer: key["iss"]?.string ?? key["issuer"]?.string)
        }
        let replayMember = object["replays"]
        replays = int(replayMember?["count"]) ?? 0
        for example in replayMember?["examples"]?.array ?? [] {
            replayExamples.append(ReplayExample(line: int(example["line"]) ?? 0, firstLine: int(example["firstLine"]) ?? 0,
                                                issuer: example["iss"]?.string, subject: example["sub"]?.string,
                                                at: time(example["at"]) ?? 0))
        }
        let expiredMember = object["usedAfterExpiry"]
        usedAfterExpiry = int(expiredMember?["count"]) ?? 0
        for example in expiredMember?["examples"]?.array ?? [] {
            expiredExamples.append(ExpiredExample(line: int(example["line"]) ?? 0, issuer: example["iss"]?.string,
                                                  subject: example["sub"]?.string, expires: time(example["exp"]) ?? 0,
                                                  at: time(example["at"]) ?? 0))
        }
        firstAt = time(object["firstAt"])
        lastAt = time(object["lastAt"])
        verifications = int(object["verifications"]) ?? 0
        cacheHits = int(object["cacheHits"]) ?? 0
        threads = int(object["threads"]) ?? 1
        elapsedSeconds = object["elapsedSeconds"]?.double ?? 0
        cpuSeconds = object["cpuSeconds"]?.double ?? 0
        if let message = object["inputError"]?.string { inputError = AuditInputError(.io, message) }
        guard let shardMember = object["shard"], shardMember.objectMembers != nil else {
            throw bad("is not a shard's summary (it has no \"shard\" member: the audit ran without --shard)")
        }
        guard let index = int(shardMember["index"]), let count = int(shardMember["count"]),
              let shard = try? Shard(index: index, count: count) else { throw bad("its \"shard\" member has no valid index and count") }
        self.shard = shard
        runID = shardMember["run"]?.string
        shardAttempt = shardMember["attempt"]?.string
        replayUnchecked = int(object["replayUnchecked"]) ?? 0
        func timeline(_ value: JSONTree?, into t: inout Timeline) throws(AuditError) {
            guard let member = value, let width = member["width"]?.double, let seriesItems = member["series"]?.array,
                  let buckets = member["buckets"]?.array else {
                throw bad("its \"shard\" member has no time series")
            }
            let series = seriesItems.compactMap(\.string)
            guard series.count == seriesItems.count else { throw bad("its \"shard\" member has no time series") }
            t.series = series
            t.width = width
            var rows: [Int64: [Int]] = [:]
            var low = Int64.max, high = Int64.min
            for item in buckets {
                guard let row = item.array, row.count == 2, let bucket = row[0].int64, let countItems = row[1].array else {
                    throw bad("a time bucket is malformed")
                }
                let counts = countItems.compactMap { $0.int64.map { Int($0) } }
                guard counts.count == countItems.count else { throw bad("a time bucket is malformed") }
                rows[bucket] = counts
                low = min(low, bucket)
                high = max(high, bucket)
            }
            // A summary written by an audit never spans more buckets than a timeline holds (it coarsens first).
            let span = high.subtractingReportingOverflow(low)
            guard rows.isEmpty || (!span.overflow && span.partialValue < Int64(Timeline.maxBuckets)) else {
                throw bad("a time series spans more than \(Timeline.maxBuckets) buckets")
            }
            t.buckets = rows
            t.low = low
            t.high = high
        }
        try timeline(shardMember["verdictTimeline"], into: &verdictTimeline)
        try timeline(shardMember["keyTimeline"], into: &keyTimeline)
    }

    /// Merges the summaries of every shard of one run into the summary of the whole input.
    /// - Parameter parts: each shard's summary and the name to call it by (its file).
    /// - Throws: ``AuditError`` naming the summaries when they come from different runs, cover the same
    ///   shard twice, miss a shard, or read different inputs.
    package static func merge(_ parts: [(name: String, summary: AuditSummary)]) throws(AuditError) -> AuditSummary {
        guard let first = parts.first else { throw AuditError("no summaries to merge") }
        guard let count = first.summary.shard?.count else { throw AuditError("\(first.name) is not a shard's summary") }
        for part in parts {
            guard let shard = part.summary.shard else { throw AuditError("\(part.name) is not a shard's summary") }
            if part.summary.runID != first.summary.runID {
                throw AuditError("\(part.name) is of run \(part.summary.runID ?? "(none)") but \(first.name) of run \(first.summary.runID ?? "(none)"): summaries of different runs do not merge")
            }
            if shard.count != count {
                throw AuditError("\(part.name) is shard \(shard) but \(first.name) is shard \(first.summary.shard!): one run has one number of shards")
            }
            if part.summary.lines != first.summary.lines {
                throw AuditError("\(part.name) read \(part.summary.lines) lines but \(first.name) read \(first.summary.lines): not the same input, or one shard stopped early")
            }
        }
        var byIndex: [Int: String] = [:]
        for part in parts {
            let index = part.summary.shard!.index
            if let other = byIndex[index] {
                throw AuditError("\(other) and \(part.name) are both shard \(index)/\(count): overlapping shards (keep the summary of one run of each shard)")
            }
            byIndex[index] = part.name
        }
        let missing = (0..<count).filter { byIndex[$0] == nil }
        if !missing.isEmpty {
            throw AuditError("missing shard" + (missing.count > 1 ? "s " : " ") + missing.map { "\($0)/\(count)" }.joined(separator: ", ")
                                    + " of run \(first.summary.runID ?? "(none)")")
        }

        var merged = AuditSummary()
        merged.lines = first.summary.lines
        merged.threads = 0
        // In line order of the shards' first lines, so that bounded tables fill as one process's would.
        for (_, s) in parts.sorted(by: { $0.summary.shard!.index < $1.summary.shard!.index }) {
            merged.records += s.records
            merged.blankLines += s.blankLines
            merged.valid += s.valid
            merged.invalid += s.invalid
            for (code, n) in s.byError { merged.byError[code, default: 0] += n }
            merged.byIssuer.absorb(s.byIssuer)
            merged.byAudience.absorb(s.byAudience)
            merged.byKid.absorb(s.byKid)
            merged.byProfile.absorb(s.byProfile)
            for (kid, usage) in s.keyUsage {
                if var known = merged.keyUsage[kid] {
                    known.absorb(usage)
                    known.issuer = known.issuer ?? usage.issuer
                    merged.keyUsage[kid] = known
                } else if merged.keyUsage.count < 1000 {
                    merged.keyUsage[kid] = usage
                }
            }
            merged.replays += s.replays
            merged.replayExamples += s.replayExamples
            merged.usedAfterExpiry += s.usedAfterExpiry
            merged.expiredExamples += s.expiredExamples
            if let at = s.firstAt { merged.firstAt = min(merged.firstAt ?? at, at) }
            if let at = s.lastAt { merged.lastAt = max(merged.lastAt ?? at, at) }
            merged.verifications += s.verifications
            merged.cacheHits += s.cacheHits
            merged.threads = max(merged.threads, s.threads)
            merged.elapsedSeconds = max(merged.elapsedSeconds, s.elapsedSeconds)
            merged.cpuSeconds += s.cpuSeconds
            merged.inputError = merged.inputError ?? s.inputError
            merged.replayUnchecked += s.replayUnchecked
            merged.verdictTimeline.absorb(s.verdictTimeline)
            merged.keyTimeline.absorb(s.keyTimeline)
        }
        merged.replayExamples = Array(merged.replayExamples.sorted { $0.line < $1.line }.prefix(exampleLimit))
        merged.expiredExamples = Array(merged.expiredExamples.sorted { $0.line < $1.line }.prefix(exampleLimit))
        return merged
    }
}

extension BoundedCounter {
    /// Adds another counter's counts (values beyond the limit, and the other's `(other)`, go to `(other)`).
    mutating func absorb(_ other: BoundedCounter) {
        for (value, n) in other.counts.sorted(by: { $0.key < $1.key }) { add(value, n) }
        otherCount += other.otherCount
    }
}

extension Timeline {
    /// Adds another timeline's counts, series matched by name: both are brought to the coarser width (widths
    /// divide one another, so buckets merge exactly), then coarsened until the span fits, as one timeline that
    /// had counted every time itself would be.
    mutating func absorb(_ other: Timeline) {
        // The other's series first, in its order (the order they were first counted in), not in the order its
        // buckets come out of their dictionary; each looked up once, not once a count.
        let indices = other.series.map { seriesIndex($0) }
        while width < other.width { coarsen() }
        let factor = Int64((width / other.width).rounded())
        func target(_ bucket: Int64) -> Int64 { bucket >= 0 ? bucket / factor : -((-bucket + factor - 1) / factor) }
        /// Adds `counts` (the other's series) into `row` (this timeline's); whether anything was counted.
        func add(_ counts: [Int], into row: inout [Int]) -> Bool {
            var counted = false
            for k in 0..<min(counts.count, indices.count) where counts[k] > 0 {
                guard let index = indices[k] else { continue }
                if row.count <= index { row += repeatElement(0, count: index + 1 - row.count) }
                row[index] += counts[k]
                counted = true
            }
            return counted
        }
        guard other.low <= other.high, !other.ring.isEmpty else { return }
        // The other's buckets in order, each row added in place into the row of its bucket at this width. The
        // merged span may exceed the ring's for a moment (two timelines that each fit): then the rows are merged
        // through a dictionary and coarsened as before.
        let from = target(other.low), to = target(other.high)
        let lowAfter = min(low, from), highAfter = max(high, to)
        if highAfter - lowAfter < Int64(Timeline.maxBuckets) {
            if ring.isEmpty { ring = Array(repeating: [], count: Timeline.maxBuckets) }
            for bucket in other.low...other.high where !other.ring[Timeline.slot(bucket)].isEmpty {
                let into = target(bucket)
                let slot = Timeline.slot(into)
                let counted = add(other.ring[Timeline.slot(bucket)], into: &ring[slot])
                // Only a bucket that counts something widens the span, as in ``add(at:series:)``.
                if counted {
                    low = min(low, into)
                    high = max(high, into)
                }
            }
            return
        }
        var merged = buckets
        for (bucket, counts) in other.buckets {
            let into = target(bucket)
            var row = merged[into] ?? []
            if add(counts, into: &row) {
                merged[into] = row
                low = min(low, into)
                high = max(high, into)
            }
        }
        // Coarsened as a dictionary until the span fits the ring, then stored in it.
        while low <= high && high - low >= Int64(Timeline.maxBuckets) {
            let factor = Timeline.nextWidth(after: width) / width
            width *= factor
            let k = Int64(factor)
            func merge(_ bucket: Int64) -> Int64 { bucket >= 0 ? bucket / k : -((-bucket + k - 1) / k) }
            var coarser: [Int64: [Int]] = [:]
            for (bucket, counts) in merged {
                var sum = coarser[merge(bucket)] ?? []
                if sum.count < counts.count { sum += Array(repeating: 0, count: counts.count - sum.count) }
                for (n, count) in counts.enumerated() { sum[n] += count }
                coarser[merge(bucket)] = sum
            }
            merged = coarser
            low = merge(low)
            high = merge(high)
        }
        buckets = merged
    }
}

/// What a run's claims that a later shard overturned (DESIGN §12) change in the merged verdicts: a shard judged
/// `line` the first acceptance of its token, then another shard found the token at an earlier (at, line). The
/// record on Redis lists every such claim with the attempt (the run of a shard) that made it; only the claims of
/// the attempts being merged stand in their verdicts, and each becomes `replayed` of the earliest line.
package struct ShardSettlement: Sendable {
    /// The merged verdicts a later shard overturned: line → the time it was judged at and the earliest line of
    /// its token.
    package private(set) var overturned: [Int: (at: Double, earliest: Int)] = [:]
    /// Every overturned claim (of any attempt): line → the line that overturned it, which may itself have been
    /// overturned later.
    private var overturnedBy: [Int: Int] = [:]

    /// No claim overturned.
    package init() {}

    /// - Parameters:
    ///   - claims: the run's overturned claims, as `RedisReplayCache.overturnedClaims(run:)` lists them.
    ///   - attempts: the merged summaries' attempts by shard index, to tell a claim of the merged run of a shard
    ///     from one of an earlier run of it (whose verdicts were written again).
    package init(claims: [(line: Int, at: Double, attempt: String, earlier: Int)], attempts: [Int: String], shardCount: Int) {
        for claim in claims { overturnedBy[claim.line] = claim.earlier }
        for claim in claims where attempts[claim.line % shardCount] == claim.attempt {
            overturned[claim.line] = (claim.at, earliest(claim.line))
        }
    }

    /// Whether nothing changes.
    package var isEmpty: Bool { overturnedBy.isEmpty }

    /// The earliest line of the token first accepted on `line` as far as a verdict could tell: `line` unless a
    /// later shard overturned it (following chains of overturned claims).
    package func earliest(_ line: Int) -> Int {
        var line = line, steps = 0
        while let next = overturnedBy[line], steps < 64 { line = next; steps += 1 }
        return line
    }
}

extension AuditSummary {
    /// Settles the claims a later shard overturned (DESIGN §12): each valid verdict of `settlement` becomes
    /// `replayed` (of the earliest line), and replays that named an overturned line as the first now name the
    /// earliest.
    /// - Parameter claims: the issuer and subject of a settled line, for the replay examples, when the merge read
    ///   the verdict lines (``VerdictMerge``); otherwise unknown.
    package mutating func settle(_ settlement: ShardSettlement,
                                claims: (Int) -> (issuer: String?, subject: String?)? = { _ in nil }) {
        guard !settlement.isEmpty else { return }
        let replayedSeries = 1 + AuditSummary.codeIndex[.replayed]!
        for (line, claim) in settlement.overturned {
            valid -= 1
            invalid += 1
            byError[TokenError.Code.replayed.rawValue, default: 0] += 1
            replays += 1
            verdictTimeline.move(at: claim.at, from: 0, to: replayedSeries)
            let known = claims(line)
            replayExamples.append(ReplayExample(line: line, firstLine: claim.earliest, issuer: known?.issuer,
                                                subject: known?.subject, at: claim.at))
        }
        replayExamples = Array(replayExamples.map { e in
            ReplayExample(line: e.line, firstLine: e.firstLine > 0 ? settlement.earliest(e.firstLine) : 0, issuer: e.issuer,
                          subject: e.subject, at: e.at)
        }.sorted { $0.line < $1.line }.prefix(AuditSummary.exampleLimit))
    }
}

extension Timeline {
    /// Moves one count at `time` from series `from` to series `to`.
    mutating func move(at time: Double, from: Int, to: Int) {
        let bucket = Int64((time / width).rounded(.down))
        guard low <= bucket, bucket <= high, !ring.isEmpty else { return }
        let slot = Timeline.slot(bucket)
        guard from < ring[slot].count, ring[slot][from] > 0 else { return }
        if ring[slot].count <= to { ring[slot] += Array(repeating: 0, count: to + 1 - ring[slot].count) }
        ring[slot][from] -= 1
        ring[slot][to] += 1
    }
}
