#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Each thread's last few token headers, as received, with what reading them found: a backend sees the same
/// few headers over and over (every Firebase token of a project carries `{"alg":"RS256","kid":…,"typ":"JWT"}`
/// with one of two or three `kid`s), and decoding and reading one costs about 1,300 instructions, against about
/// 80 for recognising it.
///
/// What is remembered is a pure function of the header's bytes and the depth limit: the decoded bytes and the
/// outcome of the checks in ``CompactJWS/readHeader(_:count:maxDepth:)`` (the algorithm, where `kid` lies).
/// An entry is used only for a header segment equal byte for byte to the one it was made from, read under the
/// same depth limit, so it gives exactly what reading again would. Only headers that passed every check are
/// remembered; a refused one is read, and refused, every time. Nothing about keys or signatures is kept.
///
/// The entries are thread-local (``ThreadLocal``): no lock, no shared mutable state, and a thread's entries
/// are freed when it exits.
enum HeaderMemo {
    /// Entries per thread, replaced in turn: enough for the headers of a few providers at a key rotation.
    static let entryCount = 4
    /// Longer header segments (unusual: a real header is 60–140 characters) are read every time.
    static let maxEncoded = 192
    static let maxDecoded = maxEncoded / 4 * 3

    struct Entry {
        var encodedCount: Int32 = -1
        var decodedCount: Int32 = 0
        var maxDepth: Int = 0
        var kidStart: Int32 = -1
        var kidEnd: Int32 = -1
        var kidEscaped = false
        var algorithm: JWSAlgorithm = .rs256
        var encoded: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var decoded: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                      UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    struct Entries {
        var next = 0
        var entries: (Entry, Entry, Entry, Entry) = (Entry(), Entry(), Entry(), Entry())
    }

    /// This thread's entries.
    static let perThread = ThreadLocal(Entries())

    @inline(__always)
    static func threadEntries() -> UnsafeMutablePointer<Entries> { perThread.pointer() }

    /// The remembered reading of the header segment `encoded` under `maxDepth`: its decoded bytes are copied to
    /// `decoded` (which has room for them) and the header is returned; nil when this thread has not seen it.
    static func recall(_ encoded: UnsafeBufferPointer<UInt8>, maxDepth: Int, into decoded: UnsafeMutablePointer<UInt8>,
                       storage: JSONDocument) -> JOSEHeader? {
        guard encoded.count <= maxEncoded else { return nil }
        let all = threadEntries()
        return withUnsafeMutableBytes(of: &all.pointee.entries) { raw -> JOSEHeader? in
            let entries = raw.bindMemory(to: Entry.self)
            for k in 0..<entryCount {
                let entry = entries.baseAddress! + k
                guard entry.pointee.encodedCount == Int32(encoded.count), entry.pointee.maxDepth == maxDepth else { continue }
                let same = withUnsafeBytes(of: &entry.pointee.encoded) { stored in
                    bytesEqual(UnsafeBufferPointer(start: stored.baseAddress!.assumingMemoryBound(to: UInt8.self), count: encoded.count), encoded)
                }
                guard same else { continue }
                let count = Int(entry.pointee.decodedCount)
                withUnsafeBytes(of: &entry.pointee.decoded) { stored in
                    decoded.initialize(from: stored.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
                }
                return JOSEHeader(storage: storage, count: entry.pointee.decodedCount, kidStart: entry.pointee.kidStart,
                                  kidEnd: entry.pointee.kidEnd, kidEscaped: entry.pointee.kidEscaped,
                                  algorithm: entry.pointee.algorithm)
            }
            return nil
        }
    }

    /// Remembers that `encoded`, read under `maxDepth`, decoded to the first `header.count` bytes of
    /// `header.storage` and passed every check with the result `header`.
    static func remember(_ encoded: UnsafeBufferPointer<UInt8>, maxDepth: Int, header: JOSEHeader) {
        guard encoded.count <= maxEncoded, let algorithm = header.algorithm else { return }
        let all = threadEntries()
        let k = all.pointee.next
        all.pointee.next = (k + 1) % entryCount
        withUnsafeMutableBytes(of: &all.pointee.entries) { raw in
            let entry = raw.bindMemory(to: Entry.self).baseAddress! + k
            entry.pointee.encodedCount = Int32(encoded.count)
            entry.pointee.decodedCount = header.count
            entry.pointee.maxDepth = maxDepth
            entry.pointee.kidStart = header.kidStart
            entry.pointee.kidEnd = header.kidEnd
            entry.pointee.kidEscaped = header.kidEscaped
            entry.pointee.algorithm = algorithm
            withUnsafeMutableBytes(of: &entry.pointee.encoded) { stored in
                stored.baseAddress!.copyMemory(from: encoded.baseAddress!, byteCount: encoded.count)
            }
            withUnsafeMutableBytes(of: &entry.pointee.decoded) { stored in
                stored.baseAddress!.copyMemory(from: header.storage.bytes, byteCount: Int(header.count))
            }
        }
    }
}
