// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "IDTokenKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "JOSE", targets: ["JOSE"]),
        .library(name: "IDTokenKit", targets: ["IDTokenKit"]),
        .library(name: "IDTokenKitRedis", targets: ["IDTokenKitRedis"]),
        // The audit engine: package-level API (idtoken, the bench harness); a product for the fuzz package.
        .library(name: "IDTokenAudit", targets: ["IDTokenAudit"]),
        // The configuration file's schema: package-level API (idtoken, the service, the bench); a product for the fuzz package.
        .library(name: "IDTokenConfiguration", targets: ["IDTokenConfiguration"]),
        .library(name: "IDTokenKitLifecycle", targets: ["IDTokenKitLifecycle"]),
        // `idtoken serve`'s service: package-level API (idtoken); a product for the fuzz package's request parser.
        .library(name: "IDTokenServe", targets: ["IDTokenServe"]),
        .executable(name: "idtoken", targets: ["idtoken"]),
        .executable(name: "idtoken-bench", targets: ["idtoken-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"]), .brew(["jansson"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"]), .brew(["hiredis"])]
        ),
        // The project's own small C for JOSE: SIMD base64url and byte scanning (Swift has no byte shuffle),
        // ThreadSanitizer annotations (declarations only; called by builds made with -DIDTK_TSAN).
        .target(name: "CJOSEShims", cSettings: buildCommitSettings),
        .target(name: "JOSE", dependencies: ["CLibCrypto", "CJansson", "CJOSEShims"], swiftSettings: fuzzSettings),
        .target(
            name: "IDTokenKit",
            dependencies: [
                "JOSE",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: fuzzSettings
        ),
        .target(
            name: "IDTokenKitRedis",
            dependencies: ["IDTokenKit", "CHiredis", .product(name: "Logging", package: "swift-log")],
            swiftSettings: fuzzSettings
        ),
        // Key refresh as a swift-service-lifecycle Service, shared by `Integrations/` (Vapor, Hummingbird) and any
        // server built on a service group; IDTokenKit itself stays free of the lifecycle dependency.
        .target(
            name: "IDTokenKitLifecycle",
            dependencies: [
                "IDTokenKit",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The configuration file every door reads (`--config`): profiles, their keys, and the doors' own members.
        .target(name: "IDTokenConfiguration", dependencies: ["IDTokenKit"], swiftSettings: fuzzSettings),
        .target(
            name: "IDTokenAudit",
            dependencies: [
                "IDTokenKit",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: fuzzSettings
        ),
        // `idtoken serve` (DESIGN §10): the verification service behind nginx, Envoy and Traefik.
        .target(
            name: "IDTokenServe",
            dependencies: [
                "IDTokenKit",
                "IDTokenConfiguration",
                "IDTokenKitRedis",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: fuzzSettings
        ),
        .executableTarget(
            name: "idtoken",
            dependencies: [
                "JOSE",
                "IDTokenKit",
                "IDTokenConfiguration",
                "IDTokenAudit",
                "IDTokenKitRedis",
                "IDTokenServe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "BenchHarness", dependencies: ["JOSE", "IDTokenKit", "IDTokenKitRedis", "IDTokenConfiguration", "IDTokenAudit",
                                                    "IDTokenServe", .product(name: "NIOEmbedded", package: "swift-nio")],
                path: "bench/Sources/BenchHarness"),
        .executableTarget(
            name: "idtoken-bench",
            dependencies: ["BenchHarness"],
            path: "bench/Sources/idtoken-bench"
        ),
        // Test helpers shared by the test targets (a libcrypto-backed token signer, seeded generators).
        .target(name: "TestSupport", dependencies: ["JOSE", "CLibCrypto", "IDTokenKitRedis", .product(name: "Logging", package: "swift-log")],
                path: "Tests/TestSupport"),
        // IDTokenKit for its JSON text writer only (`JSONTree.jsonText`), which hands a vector file's JWK back to
        // the parsers that take text; the tests exercise JOSE.
        .testTarget(
            name: "JOSETests",
            dependencies: ["JOSE", "IDTokenKit", "CJansson", "CLibCrypto", "TestSupport"],
            resources: []
        ),
        .testTarget(name: "IDTokenKitTests", dependencies: ["IDTokenKit"]),
        .testTarget(name: "HardeningTests", dependencies: ["IDTokenKit", "TestSupport"]),
        .testTarget(
            name: "KeySourceTests",
            dependencies: [
                "IDTokenKit",
                "IDTokenKitLifecycle",
                "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "VerifiedTokenCacheTests", dependencies: ["IDTokenKit", "JOSE", "CLibCrypto", "TestSupport"]),
        .testTarget(name: "ReplayCacheTests", dependencies: ["IDTokenKit", "TestSupport"]),
        .executableTarget(name: "replay-probe", dependencies: ["IDTokenKitRedis"], path: "Tests/ReplayProbe"),
        .testTarget(
            name: "RedisReplayCacheTests",
            dependencies: ["IDTokenKitRedis", "replay-probe", "TestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "IDTokenAuditTests", dependencies: ["IDTokenAudit", "IDTokenConfiguration", "TestSupport"]),
        // The command line's option group, against Profile(options:) and the audit configuration file.
        .testTarget(name: "idtokenTests", dependencies: ["idtoken", "IDTokenKit", "IDTokenConfiguration", "IDTokenAudit", "IDTokenServe", "TestSupport",
                                                        .product(name: "Logging", package: "swift-log"),
                                                        .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .testTarget(
            name: "IDTokenServeTests",
            dependencies: [
                "IDTokenServe",
                "IDTokenKitRedis",
                "IDTokenConfiguration",
                "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// `scripts/package` names the commit a release is built from (`idtoken --version`) in the environment; it
/// becomes a define of one C file, so that a new commit recompiles that file and what imports it, not the build.
var buildCommitSettings: [CSetting] {
    guard let commit = Context.environment["IDTOKEN_BUILD_COMMIT"], !commit.isEmpty,
        commit.allSatisfy({ $0.isHexDigit || $0 == "-" || $0.isLetter })
    else { return [] }
    return [.define("IDTK_BUILD_COMMIT", to: "\"\(commit)\"")]
}

/// The libFuzzer targets (Tests/Fuzz, built by scripts/fuzz) instrument this package's own modules, the parsers they
/// fuzz, and nothing else: with IDTK_FUZZ_BUILD=1 in the environment the targets that take these settings are
/// compiled with libFuzzer's coverage and AddressSanitizer (and testable, for FuzzCompactJWS's `@testable import`).
/// Their dependencies (swift-nio, AsyncHTTPClient, NIO SSL…) are compiled as in any debug build: `-Xswiftc` would
/// instrument every module, which doubled the fuzz build's time and guides the fuzzer through code it does not target.
var fuzzSettings: [SwiftSetting] {
    guard Context.environment["IDTK_FUZZ_BUILD"] == "1" else { return [] }
    return [.unsafeFlags(["-sanitize=fuzzer,address", "-enable-testing"])]
}
