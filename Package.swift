// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "IDTokenKit",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "JOSE", targets: ["JOSE"]),
        .library(name: "IDTokenKit", targets: ["IDTokenKit"]),
        .executable(name: "idtoken", targets: ["idtoken"]),
        .executable(name: "idtoken-bench", targets: ["idtoken-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        .target(name: "JOSE", dependencies: ["CLibCrypto", "CJansson"]),
        .target(name: "IDTokenKit", dependencies: ["JOSE"]),
        .executableTarget(
            name: "idtoken",
            dependencies: [
                "IDTokenKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "BenchHarness", dependencies: ["JOSE", "IDTokenKit"], path: "bench/Sources/BenchHarness"),
        .executableTarget(
            name: "idtoken-bench",
            dependencies: ["BenchHarness"],
            path: "bench/Sources/idtoken-bench"
        ),
        .testTarget(
            name: "JOSETests",
            dependencies: ["JOSE", "CJansson", "CLibCrypto"],
            resources: []
        ),
        .testTarget(name: "IDTokenKitTests", dependencies: ["IDTokenKit"]),
    ],
    swiftLanguageModes: [.v6]
)
