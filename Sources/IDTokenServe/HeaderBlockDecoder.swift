/// HPACK (RFC 7541) for the gRPC door: a connection's header blocks decoded into fields as bytes, lent to a visitor
/// one field at a time, without a `String` or an allocation a field. Literals are read where they are in the block;
/// Huffman-coded ones are decoded into one scratch buffer the decoder keeps; indexed fields are read from the static
/// table or from the dynamic table's entries, which are the decoder's only allocations (one an entry, when the peer
/// adds one: a client adds its request's fields once and names them by index afterwards).
///
/// Strict as RFC 7541 asks: an index past the tables, a string past the block, an integer past 2^31, a Huffman
/// string with the EOS symbol or with padding that is not a prefix of EOS of at most 7 bits, a table size update
/// above the size this door allows (4,096 bytes, HTTP/2's default, which it does not raise), after a field or third in
/// a row — each
/// is a ``Failure/compression`` error, which ends the connection (COMPRESSION_ERROR): the decoder's table can no
/// longer be the peer's. A block whose fields come to more than `maxListSize` (RFC 9113's count: name, value and 32
/// bytes a field) is ``Failure/tooLarge`` as soon as the count passes it, so that a block of references to one large
/// entry (an HPACK bomb) costs no more than the limit.
struct HeaderBlockDecoder {
    enum Failure: Error, Equatable {
        case compression
        case tooLarge
    }

    /// The largest dynamic table this door allows (SETTINGS_HEADER_TABLE_SIZE, left at its default).
    static let maxTableSize = 4096

    private var entries: [Entry] = []
    /// The oldest entry still in the table: entries before it have been evicted and are removed in batches.
    private var oldest = 0
    private var tableSize = 0
    private var tableLimit = HeaderBlockDecoder.maxTableSize
    let maxListSize: Int
    /// Huffman-decoded strings of the field being decoded (its name, then its value).
    private var scratch: [UInt8] = []

    /// One dynamic-table entry: its name's bytes, then its value's.
    private struct Entry {
        let bytes: [UInt8]
        let nameCount: Int
        var size: Int { bytes.count + 32 }
    }

    init(maxListSize: Int) {
        self.maxListSize = maxListSize
        scratch.reserveCapacity(256)
    }

    /// Decodes a whole header block, calling `field` with each field's name and value in order. The bytes lent to
    /// `field` are valid during the call only.
    mutating func decode(_ block: UnsafeRawBufferPointer,
                         _ field: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(Failure) {
        var at = 0
        var listSize = 0
        var fieldsSeen = false
        var sizeUpdates = 0
        while at < block.count {
            let first = block[at]
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = try Self.integer(block, &at, prefix: 7)
                let limit = maxListSize
                try Self.withIndexed(index, entries, oldest) { name, value throws(Failure) in
                    try Self.count(name, value, &listSize, limit: limit)
                    field(name, value)
                }
                fieldsSeen = true
            } else if first & 0xE0 == 0x20 {
                // Dynamic table size update (§6.3): only before the block's fields, and at most two (§4.2: the smallest
                // size since the last block, then the final one).
                sizeUpdates += 1
                guard !fieldsSeen, sizeUpdates <= 2 else { throw .compression }
                let size = try Self.integer(block, &at, prefix: 5)
                guard size <= Self.maxTableSize else { throw .compression }
                tableLimit = size
                evict(toFit: 0)
            } else {
                // Literal field with incremental indexing (§6.2.1, 01xxxxxx, a 6-bit index), or without indexing or never
                // indexed (§6.2.2, §6.2.3, 000xxxxx and 0001xxxx, a 4-bit index).
                let indexing = first & 0xC0 == 0x40
                let nameIndex = try Self.integer(block, &at, prefix: indexing ? 6 : 4)
                scratch.removeAll(keepingCapacity: true)
                if nameIndex == 0 {
                    let name = try string(block, &at)
                    let value = try string(block, &at)
                    try emit(name, value, indexing: indexing, &listSize, field)
                } else {
                    // The name is copied out of the table first: adding this field may evict the entry it names.
                    try Self.withIndexed(nameIndex, entries, oldest) { indexed, _ throws(Failure) in
                        scratch.append(contentsOf: indexed)
                    }
                    let nameCount = scratch.count
                    let value = try string(block, &at)
                    try emit(.scratch(0, nameCount), value, indexing: indexing, &listSize, field)
                }
                fieldsSeen = true
            }
        }
    }

    /// Where a literal's bytes are: in the block, or in the scratch buffer (offset and count).
    private enum Bytes {
        case block(UnsafeRawBufferPointer)
        case scratch(Int, Int)
    }

    private mutating func emit(_ name: Bytes, _ value: Bytes, indexing: Bool, _ listSize: inout Int,
                               _ field: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) throws(Failure) {
        let limit = maxListSize
        var added: Entry?
        let failure = scratch.withUnsafeBytes { scratch -> Failure? in
            func resolve(_ bytes: Bytes) -> UnsafeRawBufferPointer {
                switch bytes {
                case .block(let bytes): return bytes
                case .scratch(let start, let count): return UnsafeRawBufferPointer(rebasing: scratch[start..<start + count])
                }
            }
            let (name, value) = (resolve(name), resolve(value))
            do throws(Failure) { try Self.count(name, value, &listSize, limit: limit) } catch { return error }
            field(name, value)
            if indexing {
                var bytes = [UInt8]()
                bytes.reserveCapacity(name.count + value.count)
                bytes.append(contentsOf: name)
                bytes.append(contentsOf: value)
                added = Entry(bytes: bytes, nameCount: name.count)
            }
            return nil
        }
        if let failure { throw failure }
        if let added { add(added) }
    }

    private static func count(_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ listSize: inout Int,
                              limit: Int) throws(Failure) {
        listSize += name.count + value.count + 32
        guard listSize <= limit else { throw .tooLarge }
    }

    /// A string literal (§5.2): as it is in the block, or Huffman-decoded into the scratch buffer.
    private mutating func string(_ block: UnsafeRawBufferPointer, _ at: inout Int) throws(Failure) -> Bytes {
        guard at < block.count else { throw .compression }
        let huffman = block[at] & 0x80 != 0
        let length = try Self.integer(block, &at, prefix: 7)
        guard length <= block.count - at else { throw .compression }
        let bytes = UnsafeRawBufferPointer(rebasing: block[at..<at + length])
        at += length
        guard huffman else { return .block(bytes) }
        let start = scratch.count
        guard HuffmanCode.decode(bytes, into: &scratch) else { throw .compression }
        return .scratch(start, scratch.count - start)
    }

    /// An integer with an N-bit prefix (§5.1), at most 2^31 − 1.
    static func integer(_ block: UnsafeRawBufferPointer, _ at: inout Int, prefix: Int) throws(Failure) -> Int {
        let limit = (1 << prefix) - 1
        var value = Int(block[at]) & limit
        at += 1
        guard value == limit else { return value }
        var shift = 0
        while true {
            guard at < block.count, shift <= 28 else { throw .compression }
            let byte = block[at]
            at += 1
            value += Int(byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0 { break }
        }
        guard value <= Int(Int32.max) else { throw .compression }
        return value
    }

    /// The field at `index` (1 to 61: the static table; from 62: the dynamic table `entries` from `oldest`, newest
    /// first).
    private static func withIndexed(_ index: Int, _ entries: [Entry], _ oldest: Int,
                                    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(Failure) -> Void) throws(Failure) {
        guard index >= 1 else { throw .compression }
        if index <= StaticTable.count {
            try StaticTable.withField(index, body)
            return
        }
        let position = entries.count - 1 - (index - StaticTable.count - 1)
        guard position >= oldest else { throw .compression }
        let nameCount = entries[position].nameCount
        let failure = entries[position].bytes.withUnsafeBytes { bytes -> Failure? in
            do throws(Failure) {
                try body(UnsafeRawBufferPointer(rebasing: bytes[..<nameCount]), UnsafeRawBufferPointer(rebasing: bytes[nameCount...]))
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Adds a field to the dynamic table (§4.4): older entries are evicted to make room; a field larger than the
    /// table empties it and is not added.
    private mutating func add(_ entry: Entry) {
        evict(toFit: entry.size)
        guard entry.size <= tableLimit else { return }
        entries.append(entry)
        tableSize += entry.size
    }

    /// Evicts the oldest entries until `size` more bytes fit under the table's limit (all of them when it cannot).
    private mutating func evict(toFit size: Int) {
        while oldest < entries.count && tableSize + size > tableLimit {
            tableSize -= entries[oldest].size
            oldest += 1
        }
        if oldest == entries.count {
            entries.removeAll(keepingCapacity: true)
            oldest = 0
        } else if oldest >= 64 {
            entries.removeFirst(oldest)
            oldest = 0
        }
    }
}

/// HPACK's static table (RFC 7541 Appendix A): 61 fields, as one block of bytes.
enum StaticTable {
    static let count = 61

    private static let fields: [(String, String)] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""), ("cache-control", ""),
        ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
        ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""), ("date", ""), ("etag", ""),
        ("expect", ""), ("expires", ""), ("from", ""), ("host", ""), ("if-match", ""), ("if-modified-since", ""),
        ("if-none-match", ""), ("if-range", ""), ("if-unmodified-since", ""), ("last-modified", ""), ("link", ""),
        ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""), ("proxy-authorization", ""), ("range", ""),
        ("referer", ""), ("refresh", ""), ("retry-after", ""), ("server", ""), ("set-cookie", ""),
        ("strict-transport-security", ""), ("transfer-encoding", ""), ("user-agent", ""), ("vary", ""), ("via", ""),
        ("www-authenticate", ""),
    ]

    /// Every field's name and value, one after the other.
    private static let bytes: [UInt8] = fields.flatMap { Array($0.0.utf8) + Array($0.1.utf8) }

    /// Where each field's name starts, its value starts and its value ends in ``bytes``.
    private static let bounds: [(Int, Int, Int)] = {
        var bounds: [(Int, Int, Int)] = []
        var at = 0
        for (name, value) in fields {
            bounds.append((at, at + name.utf8.count, at + name.utf8.count + value.utf8.count))
            at += name.utf8.count + value.utf8.count
        }
        return bounds
    }()

    static func withField(_ index: Int,
                          _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(HeaderBlockDecoder.Failure) -> Void)
        throws(HeaderBlockDecoder.Failure) {
        let (start, middle, end) = bounds[index - 1]
        let failure = bytes.withUnsafeBytes { bytes -> HeaderBlockDecoder.Failure? in
            do throws(HeaderBlockDecoder.Failure) {
                try body(UnsafeRawBufferPointer(rebasing: bytes[start..<middle]), UnsafeRawBufferPointer(rebasing: bytes[middle..<end]))
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }
}

/// HPACK's Huffman code (RFC 7541 Appendix B). It is canonical: codes of one length are consecutive in symbol order,
/// each length's first code following the last of the length before, so each symbol's code length is all it takes.
enum HuffmanCode {
    /// The code lengths of the 256 octets and EOS (256), from RFC 7541 Appendix B.
    static let lengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28,
        28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13,
        6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5,
        6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22,
        23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23,
        23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20,
        19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27,
        27, 27, 26, 30,
    ]

    static let eos = 256

    /// What decoding needs: for each code length, its first code, how many codes have it and where their symbols
    /// start in `symbols` (the symbols in code order); and for each 8-bit prefix that holds a whole code of at most
    /// eight bits, that code's symbol and length.
    struct Tables {
        var firstCode = [UInt32](repeating: 0, count: 32)
        var counts = [UInt32](repeating: 0, count: 32)
        var offsets = [Int](repeating: 0, count: 32)
        var symbols: [UInt16] = []
        /// Symbol | length << 8, or 0 when the prefix's first code is longer than eight bits.
        var fast = [UInt16](repeating: 0, count: 256)
    }

    static let tables: Tables = {
        var tables = Tables()
        let order = (0...256).sorted { (lengths[$0], $0) < (lengths[$1], $1) }
        tables.symbols = order.map { UInt16($0) }
        var code: UInt32 = 0
        var previous = 0
        for (position, symbol) in order.enumerated() {
            let length = Int(lengths[symbol])
            code <<= UInt32(length - previous)
            if length != previous {
                tables.firstCode[length] = code
                tables.offsets[length] = position
                previous = length
            }
            tables.counts[length] += 1
            if length <= 8 {
                let base = Int(code) << (8 - length)
                for prefix in base..<base + (1 << (8 - length)) { tables.fast[prefix] = UInt16(symbol) | UInt16(length) << 8 }
            }
            code += 1
        }
        return tables
    }()

    /// Appends the octets `input` encodes to `output`; false when it is not a valid Huffman string (§5.2): EOS in it,
    /// or padding longer than seven bits or not all ones.
    static func decode(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) -> Bool {
        let tables = Self.tables
        return tables.fast.withUnsafeBufferPointer { fast in
            var bits: UInt64 = 0
            var count = 0
            var at = 0
            while true {
                while count <= 56 && at < input.count {
                    bits |= UInt64(input[at]) << UInt64(56 - count)
                    at += 1
                    count += 8
                }
                if count == 0 { return true }
                if count >= 8 {
                    let entry = fast[Int(bits >> 56)]
                    if entry != 0 {
                        let length = Int(entry >> 8)
                        output.append(UInt8(truncatingIfNeeded: entry))
                        bits <<= UInt64(length)
                        count -= length
                        continue
                    }
                }
                // A code longer than eight bits, or the string's last bits: bit by bit.
                var code: UInt32 = 0
                var length = 0
                var symbol = -1
                while length < count && length < 30 {
                    code = code << 1 | UInt32(truncatingIfNeeded: (bits << UInt64(length)) >> 63)
                    length += 1
                    if code &- tables.firstCode[length] < tables.counts[length] {
                        symbol = Int(tables.symbols[tables.offsets[length] + Int(code &- tables.firstCode[length])])
                        break
                    }
                }
                guard symbol >= 0 else {
                    // No whole code is left: what is left is padding, at most seven bits, all ones (EOS's first bits).
                    return at == input.count && length == count && count <= 7 && code == (1 << UInt32(count)) - 1
                }
                guard symbol != eos else { return false }
                output.append(UInt8(truncatingIfNeeded: symbol))
                bits <<= UInt64(length)
                count -= length
            }
        }
    }
}
