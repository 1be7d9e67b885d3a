import Foundation

/// Every key an issuer has published, kept so that old tokens can be audited after the provider rotated
/// the key that signed them out of its live set.
///
/// An archive is a directory for one issuer holding snapshots: key documents (JWKS, certificate map or key
/// cache file), one per fetch. ``add(_:to:at:)`` names each `<time>-<SHA-256 prefix>.json` (for example
/// `20250301T120000Z-9f2c4e1a0b3d5c7e.json`), so the time each was seen survives copying; other `*.json`
/// files in the directory are read too, without a time.
///
/// Loading merges the snapshots into one set, each key identified by `kid` and thumbprint (SHA-256 of its
/// SubjectPublicKeyInfo), with the first and last time a snapshot showed it.
///
/// **A `kid` that names different key material in different snapshots is refused** (listed in
/// ``conflicts`` and in the set's `rejected`, and no key answers to it). A provider never reuses a kid for a
/// new key, so this means a mistaken or tampered snapshot; guessing which of the two signed a given token
/// would let whoever planted the second one choose. Remove the bad snapshot to restore the kid.
///
/// ```swift
/// try KeyArchive.add(fetchedBody, to: "archive/apple", at: now)
/// let archive = try KeyArchive.load(directory: "archive/apple")
/// let verifier = StaticKeySource(archive.keySet)
/// ```
public struct KeyArchive: Sendable {
    /// One key as the archive saw it.
    public struct Entry: Sendable {
        /// The key, parsed and bound to its algorithm.
        public let key: PublicKey
        /// First and last snapshot time that listed the key; nil when only untimed snapshots did.
        public let firstSeen: Double?
        /// The time of the last snapshot that had the key (Unix seconds), when known.
        public let lastSeen: Double?
        /// How many snapshots listed it.
        public let snapshotCount: Int
        /// The key's `kid`.
        public var kid: String? { key.kid }
        /// The key's RFC 7638 thumbprint.
        public var thumbprint: String { key.thumbprint }
    }

    /// One file of the archive.
    public struct Snapshot: Sendable {
        /// The snapshot file.
        public let path: String
        /// From the file name, or the fetch time inside a key cache file; nil otherwise.
        public let time: Double?
        /// The usable kids it lists, and the keys it lists that were refused.
        public let kids: [String]
        /// Keys of the snapshot that were refused, with the reason.
        public let rejected: [RejectedKey]
    }

    /// The archive's directory.
    public let directory: String
    /// Oldest first; untimed snapshots first of all.
    public let snapshots: [Snapshot]
    /// Sorted by kid, then first-seen time.
    public let entries: [Entry]
    /// Kids that named more than one key; refused.
    public let conflicts: [String]
    /// The merged, usable set: every entry except the conflicting kids.
    public let keySet: JWKSet

    /// The entry (or entries, for a conflicting kid) with this kid.
    public func entries(kid: String) -> [Entry] { entries.filter { $0.kid == kid } }

    /// Reads and merges every snapshot in `directory`.
    /// - Throws: ``KeyFetchError`` when the directory cannot be listed or a snapshot is not a key document.
    public static func load(directory: String) throws(KeyFetchError) -> KeyArchive {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw KeyFetchError(.file, "cannot list the key archive \(directory): \(error.localizedDescription)")
        }
        var snapshots: [(Snapshot, JWKSet)] = []
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let path = (directory as NSString).appendingPathComponent(name)
            guard KeyFileIO.isDirectory(path) == false else { continue }
            let contents = try KeySetFile.read(file: path)
            let time = snapshotTime(fileName: name) ?? contents.fetchedAt
            snapshots.append((Snapshot(path: path, time: time, kids: contents.keys.kids, rejected: contents.keys.rejected),
                              contents.keys))
        }
        snapshots.sort { ($0.0.time ?? -.infinity, $0.0.path) < ($1.0.time ?? -.infinity, $1.0.path) }
        return merge(directory: directory, snapshots: snapshots)
    }

    static func merge(directory: String, snapshots: [(Snapshot, JWKSet)]) -> KeyArchive {
        struct Accumulator {
            let key: PublicKey
            var first: Double?, last: Double?, count: Int
        }
        var order: [String] = []
        var seen: [String: Accumulator] = [:]
        var rejected: [RejectedKey] = []
        var rejectedSeen: Set<String> = []
        for (snapshot, keys) in snapshots {
            for key in keys.keys {
                let id = "\(key.kid ?? "")\u{0}\(key.thumbprint)\u{0}\(key.algorithm.rawValue)"
                if var acc = seen[id] {
                    acc.count += 1
                    if let t = snapshot.time {
                        acc.first = min(acc.first ?? t, t)
                        acc.last = max(acc.last ?? t, t)
                    }
                    seen[id] = acc
                } else {
                    order.append(id)
                    seen[id] = Accumulator(key: key, first: snapshot.time, last: snapshot.time, count: 1)
                }
            }
            for r in keys.rejected where rejectedSeen.insert("\(r.kid ?? "")\u{0}\(r.reason)").inserted {
                rejected.append(r)
            }
        }
        let entries = order.map { id -> Entry in
            let acc = seen[id]!
            return Entry(key: acc.key, firstSeen: acc.first, lastSeen: acc.last, snapshotCount: acc.count)
        }.sorted { ($0.kid ?? "", $0.firstSeen ?? -.infinity) < ($1.kid ?? "", $1.firstSeen ?? -.infinity) }

        let byKid = Dictionary(grouping: entries.filter { $0.kid != nil }, by: { $0.kid! })
        let conflicts = byKid.filter { $0.value.count > 1 }.keys.sorted()
        for kid in conflicts {
            let seenText = byKid[kid]!.map { entry in
                "\(entry.thumbprint.prefix(16))… \(entry.key.algorithm.rawValue) seen \(describe(entry.firstSeen))–\(describe(entry.lastSeen))"
            }.joined(separator: ", ")
            rejected.append(RejectedKey(kid: kid, reason: "the kid names \(byKid[kid]!.count) different keys across "
                                        + "snapshots (\(seenText)); refused rather than guess which one signed a token"))
        }
        let conflicting = Set(conflicts)
        let usable = entries.filter { $0.kid.map { !conflicting.contains($0) } ?? true }.map(\.key)
        return KeyArchive(directory: directory, snapshots: snapshots.map(\.0), entries: entries, conflicts: conflicts,
                          keySet: JWKSet(keys: usable, rejected: rejected))
    }

    // MARK: Adding snapshots

    /// Stores a key document (as fetched) in the archive directory, creating the directory if needed.
    ///
    /// - Parameters:
    ///   - body: a JWKS, certificate map or key cache file; it must hold at least one usable key. A cache
    ///     file is stored as the key set it holds.
    ///   - directory: the archive directory.
    ///   - time: when the document was published (Unix seconds), usually its fetch time.
    /// - Returns: the snapshot's path. Adding the same document at the same second again changes nothing.
    @discardableResult
    public static func add(_ body: [UInt8], to directory: String, at time: Double) throws(KeyFetchError) -> String {
        let contents = try KeySetFile.parse(body, source: "the snapshot")
        guard !contents.keys.isEmpty else {
            let reasons = contents.keys.rejected.map(\.description).joined(separator: "; ")
            throw KeyFetchError(.noUsableKeys, "the snapshot holds no usable key\(reasons.isEmpty ? "" : ": \(reasons)")")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw KeyFetchError(.file, "cannot create the key archive \(directory): \(error.localizedDescription)")
        }
        let name = "\(UnixTime.iso8601(time, basic: true))-\(contentHash(contents.body)).json"
        let path = (directory as NSString).appendingPathComponent(name)
        if KeyFileIO.isDirectory(path) == false { return path }
        try KeyFileIO.writeAtomically(contents.body, to: path)
        return path
    }

    /// Stores the key file at `file`; its time is `time`, else the fetch time a key cache file records,
    /// else `fallbackTime`.
    @discardableResult
    public static func add(file: String, to directory: String, at time: Double?, fallbackTime: Double) throws(KeyFetchError) -> String {
        let bytes = try KeyFileIO.read(file)
        let fetched = (try? KeySetFile.parse(bytes, source: file))?.fetchedAt
        return try add(bytes, to: directory, at: time ?? fetched ?? fallbackTime)
    }

    /// The time encoded in a snapshot name written by ``add(_:to:at:)``.
    static func snapshotTime(fileName: String) -> Double? {
        let parts = fileName.split(separator: "-")
        guard parts.count == 2, parts[0].count == 16, parts[1].hasSuffix(".json") else { return nil }
        return UnixTime.parse(String(parts[0]))
    }

    /// The first 8 bytes of the document's SHA-256, in hex: a short name that tells documents apart.
    static func contentHash(_ bytes: [UInt8]) -> String {
        Array(SHA256.hash(bytes).prefix(8)).lowercaseHex
    }

    private static func describe(_ time: Double?) -> String { time.map { UnixTime.iso8601($0) } ?? "?" }
}
