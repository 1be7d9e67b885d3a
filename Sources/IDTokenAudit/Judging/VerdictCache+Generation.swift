import IDTokenKit

extension VerdictCache {
    /// Where one remembered token's exact text and nonce (what identifies it) are in its generation's text pages.
    /// Plain integers: a probe compares a slot's text without copying (and so retaining) its verdicts.
    struct Place {
        let page: Int32
        let start: Int32
        let tokenCount: Int32
        /// -1 when the record had no nonce.
        let nonceCount: Int32
    }

    /// One generation of a shard: an open-addressing table with linear probing, kept at most half full, grown by
    /// doubling. The hashes sit in an array of their own, so that a probe reads plain integers and compares the
    /// text only where the hash matches; the places of the text and the verdicts are two more columns. Tokens are
    /// never removed one by one: a generation is dropped whole. A class, used only under its shard's lock: a
    /// probe through the shard then reads the columns where they are instead of copying the generation.
    ///
    /// The tokens' and nonces' bytes are copied into pages of `pageBytes` (a larger token gets a page of its
    /// own) rather than kept as one string each: the records' own strings are released with their batch, and
    /// pages of one size are reused as they are, not left as holes of every size in the heap.
    final class Generation {
        // Read and written only with the shard's lock held, so the run-time exclusivity checks (one an access, several
        // a probe) are left out.
        /// Each slot's hash with its lowest bit set; 0 marks an empty slot.
        @exclusivity(unchecked) private var hashes: [UInt64]
        @exclusivity(unchecked) private var places: [Place]
        @exclusivity(unchecked) private var pairs: [Pair?]
        @exclusivity(unchecked) private var pages: [[UInt8]] = []
        /// Bytes of token and nonce text held.
        @exclusivity(unchecked) private(set) var textBytes = 0
        @exclusivity(unchecked) private(set) var count = 0

        /// The largest page, for shards that may hold 256 KiB of text or more (the default cache's sixteen: 1 MiB each).
        static let largestPageBytes = 32 * 1024
        /// The size of this generation's pages, the same for every generation of a cache.
        private let pageBytes: Int

        /// A table with room for `tokens` tokens before it grows.
        init(roomFor tokens: Int, pageBytes: Int) {
            self.pageBytes = pageBytes
            var size = 8
            while size < 2 * tokens { size <<= 1 }
            hashes = Array(repeating: 0, count: size)
            places = Array(repeating: Place(page: 0, start: 0, tokenCount: 0, nonceCount: 0), count: size)
            pairs = Array(repeating: nil, count: size)
        }

        /// The slot index holding `token` with `nonce`, if held; `mark` is their hash with its lowest bit set.
        func find(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Int? {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while true {
                let held = hashes[i]
                if held == 0 { return nil }
                if held == mark, holds(places[i], token, nonce) { return i }
                i = (i + 1) & mask
            }
        }

        /// Whether the text at `place` is `token` with `nonce`, byte for byte.
        private func holds(_ place: Place, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?) -> Bool {
            guard Int(place.tokenCount) == token.count, Int(place.nonceCount) == (nonce?.count ?? -1) else { return false }
            return pages[Int(place.page)].withUnsafeBytes { page in
                let start = Int(place.start)
                return ByteSearch.equal(page, at: start, token)
                    && (nonce.map { ByteSearch.equal(page, at: start + token.count, $0) } ?? true)
            }
        }

        /// The verdict the slot at `index` holds for `time`, read in place.
        func verdict(at index: Int, for time: Double) -> Verdict? {
            pairs.withUnsafeBufferPointer { $0[index]!.verdict(at: time) }
        }

        /// The latest entry of the slot at `index`.
        func latest(at index: Int) -> Entry { pairs.withUnsafeBufferPointer { $0[index]!.latest } }

        /// Makes `entry` the slot's latest, its latest until now the one before.
        func push(_ entry: Entry, at index: Int) {
            pairs[index] = Pair(latest: entry, earlier: pairs[index]!.latest)
        }

        /// Adds a token that is not held, copying its text and nonce.
        func add(_ mark: UInt64, _ token: UnsafeRawBufferPointer, _ nonce: UnsafeRawBufferPointer?, _ pair: Pair) {
            if 2 * (count + 1) > hashes.count { grow() }
            let bytes = token.count + (nonce?.count ?? 0)
            if pages.isEmpty || pages[pages.count - 1].count + bytes > pages[pages.count - 1].capacity {
                var page: [UInt8] = []
                page.reserveCapacity(max(pageBytes, bytes))
                pages.append(page)
            }
            let last = pages.count - 1
            let place = Place(page: Int32(last), start: Int32(pages[last].count), tokenCount: Int32(token.count),
                              nonceCount: Int32(nonce?.count ?? -1))
            pages[last].append(contentsOf: token)
            if let nonce { pages[last].append(contentsOf: nonce) }
            textBytes += bytes
            put(mark, place, pair)
            count += 1
        }

        private func put(_ mark: UInt64, _ place: Place, _ pair: Pair) {
            let mask = hashes.count - 1
            var i = Int(truncatingIfNeeded: mark >> 1) & mask
            while hashes[i] != 0 { i = (i + 1) & mask }
            hashes[i] = mark
            places[i] = place
            pairs[i] = pair
        }

        private func grow() {
            let oldHashes = hashes, oldPlaces = places, oldPairs = pairs
            hashes = Array(repeating: 0, count: oldHashes.count * 2)
            places = Array(repeating: Place(page: 0, start: 0, tokenCount: 0, nonceCount: 0), count: oldHashes.count * 2)
            pairs = Array(repeating: nil, count: oldHashes.count * 2)
            for i in oldHashes.indices where oldHashes[i] != 0 { put(oldHashes[i], oldPlaces[i], oldPairs[i]!) }
        }
    }
}
