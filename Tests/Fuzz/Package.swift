// swift-tools-version: 6.1
// libFuzzer targets for IDTokenKit's parsers. A package of its own so that the instrumented builds never enter
// the library's build or its `swift test`. Build and run them with scripts/fuzz (see README, "Development"), which
// builds with IDTK_FUZZ_BUILD=1 so that the IDTokenKit package instruments its own modules (its manifest's
// `fuzzSettings`), not its dependencies:
//
//     IDTK_FUZZ_BUILD=1 swift build -c debug --product FuzzJSON
//
// Every executable starts libFuzzer itself (FuzzDriver), because SwiftPM gives executables a Swift `main`; the
// executables are compiled and linked with the sanitizers here.
import PackageDescription

/// The sanitizers, for the fuzz targets' own Swift code and for their link (libFuzzer's runtime, AddressSanitizer's).
let sanitizers = ["-sanitize=fuzzer,address"]
let sanitized: [SwiftSetting] = [.unsafeFlags(sanitizers)]

/// One libFuzzer executable: FuzzDriver and the modules it fuzzes, compiled and linked with the sanitizers.
func fuzzTarget(_ name: String, _ fuzzed: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzDriver"] + fuzzed, swiftSettings: sanitized,
                      linkerSettings: [.unsafeFlags(sanitizers)])
}

let package = Package(
    name: "idtokenkit-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "IDTokenKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // swift-nio-http2's HPACK decoder, the reference FuzzHPACK checks the gRPC door's against.
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzDriver", dependencies: ["CFuzzDriver"], swiftSettings: sanitized),
        fuzzTarget("FuzzCompactJWS", [.product(name: "IDTokenKit", package: "IDTokenKit"), .product(name: "JOSE", package: "IDTokenKit")]),
        fuzzTarget("FuzzAuditLine", [.product(name: "IDTokenAudit", package: "IDTokenKit"),
                                     .product(name: "IDTokenConfiguration", package: "IDTokenKit")]),
        fuzzTarget("FuzzHTTPHead", [.product(name: "IDTokenServe", package: "IDTokenKit"), .product(name: "IDTokenKit", package: "IDTokenKit")]),
        fuzzTarget("FuzzGRPCConnection", [.product(name: "IDTokenServe", package: "IDTokenKit"),
                                          .product(name: "IDTokenConfiguration", package: "IDTokenKit"),
                                          .product(name: "NIOCore", package: "swift-nio"),
                                          .product(name: "NIOEmbedded", package: "swift-nio"),
                                          .product(name: "Logging", package: "swift-log")]),
        fuzzTarget("FuzzHPACK", [.product(name: "IDTokenServe", package: "IDTokenKit"), .product(name: "NIOCore", package: "swift-nio"),
                                 .product(name: "NIOHPACK", package: "swift-nio-http2")]),
        fuzzTarget("FuzzCheckRequest", [.product(name: "IDTokenServe", package: "IDTokenKit"), .product(name: "NIOCore", package: "swift-nio")]),
        fuzzTarget("FuzzJSON", [.product(name: "JOSE", package: "IDTokenKit")]),
        fuzzTarget("FuzzJWKS", [.product(name: "IDTokenKit", package: "IDTokenKit")]),
    ],
    swiftLanguageModes: [.v6]
)
