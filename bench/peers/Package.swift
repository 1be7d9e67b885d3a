// swift-tools-version: 6.2
// Peer benchmarks: other Swift token verifiers measured in the same run, on the same tokens and keys, against
// the same raw libcrypto baseline as idtoken-bench. A package of its own so that the peers never enter
// IDTokenKit's dependency graph.
import PackageDescription

let package = Package(
    name: "idtokenkit-peers-bench",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "IDTokenKit", path: "../.."),
        .package(url: "https://github.com/vapor/jwt-kit", exact: "5.8.0"),
    ],
    targets: [
        // The harness sources are shared with idtoken-bench through a symbolic link.
        // Target names must be unique across the package graph, hence the second name for the same sources.
        .target(
            name: "PeerBenchHarness",
            dependencies: [
                .product(name: "JOSE", package: "IDTokenKit"), .product(name: "IDTokenKit", package: "IDTokenKit"),
                .product(name: "IDTokenKitRedis", package: "IDTokenKit"),
                .product(name: "IDTokenAudit", package: "IDTokenKit"),
            ],
            path: "Sources/BenchHarness"
        ),
        .executableTarget(
            name: "peers-bench",
            dependencies: [
                "PeerBenchHarness",
                .product(name: "IDTokenKit", package: "IDTokenKit"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
