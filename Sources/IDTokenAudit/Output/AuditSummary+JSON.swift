import IDTokenKit

extension AuditSummary {
    /// The summary as one JSON document (pretty-printed, two-space indents, keys in a fixed order).
    ///
    /// ```json
    /// {"records": 12, "valid": 5, "invalid": 7, "byError": {"expired": 2, …}, "byIssuer": {…},
    ///  "byAudience": {…}, "byKid": {…}, "keys": {"kid": {"uses": 3, "firstUse": "…", "lastUse": "…"}},
    ///  "replays": {"count": 1, "examples": […]}, "usedAfterExpiry": {"count": 2, "examples": […]},
    ///  "tokensPerSecond": 41000.5, "elapsedSeconds": 0.01, …}
    /// ```
    package func json() -> String {
        var out = "{\n"
        var first = true
        func field(_ name: String, _ value: String) {
            out += (first ? "" : ",\n") + "  " + JSONText.quoted(name) + ": " + value
            first = false
        }
        func number(_ value: Double?) -> String { value.map(JSONText.number) ?? "null" }
        func time(_ value: Double?) -> String { value.map { JSONText.quoted(UnixTime.iso8601($0)) } ?? "null" }
        func counter(_ counter: BoundedCounter) -> String {
            var parts = counter.sorted.map { "    " + JSONText.quoted($0.value) + ": \($0.count)" }
            if counter.otherCount > 0 { parts.append("    \"(other)\": \(counter.otherCount)") }
            return parts.isEmpty ? "{}" : "{\n" + parts.joined(separator: ",\n") + "\n  }"
        }
        field("lines", "\(lines)")
        field("records", "\(records)")
        field("blankLines", "\(blankLines)")
        field("valid", "\(valid)")
        field("invalid", "\(invalid)")
        let errors = byError.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        field("byError", errors.isEmpty ? "{}" : "{\n" + errors.map { "    " + JSONText.quoted($0.key) + ": \($0.value)" }.joined(separator: ",\n") + "\n  }")
        field("byIssuer", counter(byIssuer))
        field("byAudience", counter(byAudience))
        field("byKid", counter(byKid))
        field("byProfile", counter(byProfile))
        let keys = keyUsage.sorted { $0.value.firstUse != $1.value.firstUse ? $0.value.firstUse < $1.value.firstUse : $0.key < $1.key }
        field("keys", keys.isEmpty ? "{}" : "{\n" + keys.map { kid, usage in
            "    " + JSONText.quoted(kid) + ": {\"issuer\": " + (usage.issuer.map(JSONText.quoted) ?? "null")
                + ", \"uses\": \(usage.uses), \"firstUse\": " + time(usage.firstUse) + ", \"lastUse\": " + time(usage.lastUse) + "}"
        }.joined(separator: ",\n") + "\n  }")
        let replayLines = replayExamples.map { e in
            "      {\"line\": \(e.line), \"firstLine\": \(e.firstLine), \"iss\": " + (e.issuer.map(JSONText.quoted) ?? "null")
                + ", \"sub\": " + (e.subject.map(JSONText.quoted) ?? "null") + ", \"at\": " + time(e.at) + "}"
        }
        field("replays", "{\"count\": \(replays), \"examples\": [" + (replayLines.isEmpty ? "" : "\n" + replayLines.joined(separator: ",\n") + "\n    ") + "]}")
        let expiredLines = expiredExamples.map { e in
            "      {\"line\": \(e.line), \"iss\": " + (e.issuer.map(JSONText.quoted) ?? "null")
                + ", \"sub\": " + (e.subject.map(JSONText.quoted) ?? "null") + ", \"exp\": " + time(e.expires)
                + ", \"at\": " + time(e.at) + ", \"secondsLate\": " + JSONText.number(e.at - e.expires) + "}"
        }
        field("usedAfterExpiry", "{\"count\": \(usedAfterExpiry), \"examples\": [" + (expiredLines.isEmpty ? "" : "\n" + expiredLines.joined(separator: ",\n") + "\n    ") + "]}")
        field("firstAt", time(firstAt))
        field("lastAt", time(lastAt))
        field("verifications", "\(verifications)")
        field("cacheHits", "\(cacheHits)")
        field("threads", "\(threads)")
        field("elapsedSeconds", number((elapsedSeconds * 1000).rounded() / 1000))
        field("tokensPerSecond", number(tokensPerSecond.rounded()))
        field("cpuSeconds", number((cpuSeconds * 1000).rounded() / 1000))
        field("tokensPerCPUSecond", number(tokensPerCPUSecond.rounded()))
        if replayUnchecked > 0 { field("replayUnchecked", "\(replayUnchecked)") }
        field("inputError", inputError.map { JSONText.quoted($0.message) } ?? "null")
        // What `idtoken audit merge` needs of a shard's summary (SummaryMerge.swift).
        if let shard { field("shard", shardMember(shard)) }
        return out + "\n}\n"
    }
}
