/// Why the audit cannot go on, in words for the person running it, naming what to fix: a shard given badly (on
/// the command line or in an environment variable), summaries or verdict files that cannot be merged, output
/// that cannot be written, a replay store that stopped answering.
///
/// One shape for them all: the command line only prints the message and exits. Errors of the audit's input
/// (``AuditInputError``) keep a stable kind as well, for the summary.
package struct AuditError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, naming the option, variable or file.
    package let message: String
    /// An error saying `message`.
    package init(_ message: String) { self.message = message }
    /// The message.
    package var description: String { message }
}
