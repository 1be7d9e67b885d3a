import IDTokenKit

extension VerdictCache {
    /// One remembered token: where its exact text and nonce (what identifies it) are in its generation's text
    /// pages, and its verdicts.
    struct Slot {
        let page: Int32
        let start: Int32
        let tokenCount: Int32
        /// -1 when the record had no nonce.
        let nonceCount: Int32
        var pair: Pair
    }

    /// One generation of a shard: an open-addressing table with linear probing, kept at most half full, grown by
    /// doubling. The hashes sit in an array of their own, so that a probe reads plain integers and compares the
    /// text only where the hash matches. Tokens are never removed one by one: a generation is dropped whole.
    ///
    /// The tokens' and nonces' bytes are copied into pages of ``pageBytes`` (a larger token gets a page of its
    /// own) rather than kept as one string each: the records' own strings are released with their batch, and
    /// pages of one size are reused as they are, not left as holes of every size in the heap.
    struct Generation {
        /// Each slot's hash with its lowest bit set; 0 marks an empty slot.
        private var hashes: [UInt64]
        private var slots: [Slot?]
        private var pages: [[UInt8]] = []
        /// Bytes of token and nonce text held.
        private(set) var textBytes = 0
        private(set) var count = 0

        static let pageBytes = 32 * 1024

        /// A table with room for `tokens` tokens before it grows.
        init(roomFor tokens: Int) {
            var size = 8
            while size < 2 * tokens { size <<= 1 }
            hashes = Array(repeating: 0, count: size)
            slots = Array(repeating: nil, count: size)
        }

        /// The slot index holding `token` with `nonce`, if held; `mark` is their hash with its lowest bit set.
        func find(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Int? {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while true {
                let held = hashes[i]
                if held == 0 { return nil }
                if held == mark, holds(slots[i]!, token, nonce) { return i }
                i = (i + 1) & mask
            }
        }

        /// Whether `slot` is `token` with `nonce`, byte for byte.
        private func holds(_ slot: Slot, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Bool {
            guard Int(slot.tokenCount) == token.count, Int(slot.nonceCount) == (nonce?.count ?? -1) else { return false }
            return pages[Int(slot.page)].withUnsafeBytes { page in
                let start = Int(slot.start)
                return ByteSearch.equal(page, at: start, token)
                    && (nonce.map { ByteSearch.equal(page, at: start + token.count, $0) } ?? true)
            }
        }

        func pair(at index: Int) -> Pair { slots[index]!.pair }

        mutating func replacePair(at index: Int, with pair: Pair) { slots[index]!.pair = pair }

        /// Adds a token that is not held, copying its text and nonce.
        mutating func add(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?, _ pair: Pair) {
            if 2 * (count + 1) > hashes.count { grow() }
            let bytes = token.count + (nonce?.count ?? 0)
            if pages.isEmpty || pages[pages.count - 1].count + bytes > pages[pages.count - 1].capacity {
                var page: [UInt8] = []
                page.reserveCapacity(max(Generation.pageBytes, bytes))
                pages.append(page)
            }
            let last = pages.count - 1
            let slot = Slot(page: Int32(last), start: Int32(pages[last].count), tokenCount: Int32(token.count),
                            nonceCount: Int32(nonce?.count ?? -1), pair: pair)
            pages[last].append(contentsOf: token)
            if let nonce { pages[last].append(contentsOf: nonce) }
            textBytes += bytes
            put(mark, slot)
            count += 1
        }

        private mutating func put(_ mark: UInt64, _ slot: Slot) {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while hashes[i] != 0 { i = (i + 1) & mask }
            hashes[i] = mark
            slots[i] = slot
        }

        private mutating func grow() {
            let oldHashes = hashes, oldSlots = slots
            hashes = Array(repeating: 0, count: oldHashes.count * 2)
            slots = Array(repeating: nil, count: oldHashes.count * 2)
            for (mark, slot) in zip(oldHashes, oldSlots) where mark != 0 { put(mark, slot!) }
        }
    }
}
