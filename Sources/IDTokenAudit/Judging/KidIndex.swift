/// Finds the profile a key ID belongs to from the `kid`'s bytes as the token's header holds them, so that routing
/// makes no `String` of the kid and hashes nothing: an audit's profiles hold a handful of keys, compared by length
/// and then eight bytes at a time. A larger key set (an archive of every key ever published) is looked up in a
/// dictionary.
struct KidIndex: Sendable {
    private let entries: [(kid: [UInt8], index: Int)]
    private let dictionary: [String: Int]?
    static let linearLimit = 32

    init(_ byKid: [String: Int]) {
        if byKid.count <= KidIndex.linearLimit {
            entries = byKid.map { (Array($0.key.utf8), $0.value) }
            dictionary = nil
        } else {
            entries = []
            dictionary = byKid
        }
    }

    func index(of kid: UnsafeBufferPointer<UInt8>) -> Int? {
        if let dictionary { return dictionary[String(decoding: kid, as: UTF8.self)] }
        let raw = UnsafeRawBufferPointer(kid)
        for entry in entries where entry.kid.count == kid.count {
            if entry.kid.withUnsafeBytes({ ByteComparison.equal($0, at: 0, raw) }) { return entry.index }
        }
        return nil
    }
}
