extension String {
    /// The same text in storage of its own (a copy of the UTF-8 bytes; a string of up to 15 bytes has no storage
    /// to share): for values a thread keeps apart from the others, whose reference counts it changes on every token
    /// (``PublicKey/replica()``).
    package var inStorageOfItsOwn: String { String(decoding: Array(utf8), as: UTF8.self) }
}
