extension Array where Element == UInt8 {
    /// Appends what `body` writes at the pointer it is given, at most `bound` bytes (`body` returns how many it
    /// wrote): for output laid out piece by piece (an audit record, identity header lines), where appending each
    /// piece would check the array's capacity and uniqueness every time.
    ///
    /// Written straight into the array's spare room, grown geometrically when short, with none of it filled first
    /// (`append(addingCapacity:initializingWith:)`); where the standard library lacks that (Apple systems before 26),
    /// into room filled with zeros and cut back after.
    @inlinable
    package mutating func appendWriting(atMost bound: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            append(addingCapacity: bound) { span in
                span.withUnsafeMutableBufferPointer { room, initialized in
                    let written = body(room.baseAddress!)
                    precondition(written <= bound, "wrote past the room asked for")
                    initialized = written
                }
            }
            return
        }
        let start = count
        append(contentsOf: repeatElement(0, count: bound))
        let written = withUnsafeMutableBufferPointer { body($0.baseAddress! + start) }
        precondition(written <= bound, "wrote past the room asked for")
        removeLast(bound - written)
    }
}
