import CFuzzDriver
import Foundation

/// Runs a fuzz target under libFuzzer.
///
/// SwiftPM links every executable with a Swift `main` (`--defsym main=<Target>_main`), which hides libFuzzer's
/// own `main`; so each target's `main.swift` calls ``Fuzz/run(_:)``, which hands the command line to
/// `LLVMFuzzerRunDriver`. `LLVMFuzzerTestOneInput` must still be defined, because libFuzzer's `main` object
/// refers to it; it is defined here and runs the same body, so a crash found by either path reproduces with
/// `./FuzzX crash-file`.
public enum Fuzz {
    nonisolated(unsafe) static var body: (UnsafeRawBufferPointer) -> Void = { _ in }

    /// Starts libFuzzer with the process's arguments and `body` as the target; never returns.
    public static func run(_ body: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        Fuzz.body = body
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzOneInput(data, size) })
    }

    /// Stops the run with a finding: libFuzzer saves the input that led here as `crash-…`.
    public static func fail(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        FileHandle.standardError.write(Data("FUZZ FINDING at \(file):\(line): \(message())\n".utf8))
        abort()
    }

    /// The bytes shown for a message: printable ASCII as is, everything else as `\xNN`, at most 400 bytes.
    public static func show<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let shown = bytes.prefix(400).map { b -> String in
            (0x20..<0x7F).contains(b) && b != UInt8(ascii: "\\") ? String(UnicodeScalar(b)) : "\\x" + String(b, radix: 16)
        }.joined()
        return bytes.count > 400 ? shown + "…(\(bytes.count) bytes)" : shown
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Fuzz.body(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

extension Fuzz {
    /// The repository's root directory, found from this file's path, for the vectors the targets load at start.
    public static let repositoryRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<5 { url.deleteLastPathComponent() }  // Sources/FuzzDriver/Fuzz.swift under Tests/Fuzz
        return url
    }()

    /// A file under the repository root, as bytes; stops the run if it cannot be read.
    public static func read(_ relativePath: String) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: repositoryRoot.appendingPathComponent(relativePath).path) else {
            fail("cannot read \(relativePath) under \(repositoryRoot.path)")
        }
        return [UInt8](data)
    }
}
