import Foundation
import IDTokenKit

/// What `idtoken keys show` and `keys fetch` print about a key set: a table for people, JSON for scripts.
struct KeySetReport {
    struct Key: Encodable {
        let kid: String?
        let alg: String
        let kty: String
        let bits: Int
        let thumbprint: String
        var first_seen: String?
        var last_seen: String?
        var snapshots: Int?
    }

    struct Rejected: Encodable {
        let kid: String?
        let reason: String
    }

    struct Document: Encodable {
        let source: String
        let kind: String
        let keys: [Key]
        let rejected: [Rejected]
        var conflicts: [String]?
        var snapshots: Int?
        var fetched_at: String?
        var expires_at: String?
        var archived_as: String?
    }

    let document: Document

    init(source: String, kind: String, keys: JWKSet, status: KeySourceStatus? = nil, fetchedAt: Double? = nil,
         archivedAs: String? = nil) {
        var document = Document(source: source, kind: kind, keys: keys.keys.map { Self.describe($0) },
                                rejected: keys.rejected.map { Rejected(kid: $0.kid, reason: $0.reason) })
        document.fetched_at = (status?.fetchedAt ?? fetchedAt).map { UnixTime.iso8601($0) }
        document.expires_at = status?.expiresAt.map { UnixTime.iso8601($0) }
        document.archived_as = archivedAs
        self.document = document
    }

    init(source: String, archive: KeyArchive) {
        let keys = archive.entries.map { entry -> Key in
            var key = Self.describe(entry.key)
            key.first_seen = entry.firstSeen.map { UnixTime.iso8601($0) }
            key.last_seen = entry.lastSeen.map { UnixTime.iso8601($0) }
            key.snapshots = entry.snapshotCount
            return key
        }
        var document = Document(source: source, kind: "directory", keys: keys,
                                rejected: archive.keySet.rejected.map { Rejected(kid: $0.kid, reason: $0.reason) })
        document.conflicts = archive.conflicts
        document.snapshots = archive.snapshots.count
        self.document = document
    }

    static func describe(_ key: PublicKey) -> Key {
        Key(kid: key.kid, alg: key.algorithm.rawValue, kty: key.algorithm.keyType.description, bits: key.bits,
            thumbprint: key.thumbprint)
    }

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(document)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func text() -> String {
        let d = document
        var lines: [String] = []
        var head = "\(d.source): \(d.keys.count) key\(d.keys.count == 1 ? "" : "s")"
        if let snapshots = d.snapshots { head += " from \(snapshots) snapshot\(snapshots == 1 ? "" : "s")" }
        if !d.rejected.isEmpty { head += ", \(d.rejected.count) refused" }
        lines.append(head)
        if let fetched = d.fetched_at { lines.append("fetched \(fetched)" + (d.expires_at.map { ", cache until \($0)" } ?? "")) }
        if let archived = d.archived_as { lines.append("archived as \(archived)") }
        let archive = d.kind == "directory"
        var rows = [["KID", "ALG", "TYPE", "BITS", "THUMBPRINT (SHA-256 of SPKI)"] + (archive ? ["FIRST SEEN", "LAST SEEN", "SNAPSHOTS"] : [])]
        for k in d.keys {
            var row = [k.kid ?? "(none)", k.alg, k.kty, String(k.bits), k.thumbprint]
            if archive { row += [k.first_seen ?? "-", k.last_seen ?? "-", k.snapshots.map(String.init) ?? "-"] }
            rows.append(row)
        }
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
        if !d.rejected.isEmpty {
            lines.append("refused:")
            for r in d.rejected { lines.append("  \(r.kid ?? "(no kid)"): \(r.reason)") }
        }
        return lines.joined(separator: "\n")
    }
}
