// swift-tools-version: 6.1
// The Vapor integration against vapor/jwt 5.2 as HTTP servers, driven by wrk (bench/serve_bench.py --vapor-peer). A package
// of its own so that vapor/jwt never enters IDTokenKit's or IDTokenKitVapor's dependency graph.
import PackageDescription

let package = Package(
    name: "VaporServers",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "IDTokenKit", path: "../../.."),
        .package(name: "IDTokenKitIntegrations", path: "../../../Integrations"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.0"),
        .package(url: "https://github.com/vapor/jwt", exact: "5.2.0"),
    ],
    targets: [
        .executableTarget(
            name: "vapor-peer-server",
            dependencies: [
                .product(name: "IDTokenKit", package: "IDTokenKit"),
                .product(name: "IDTokenKitVapor", package: "IDTokenKitIntegrations"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "JWT", package: "jwt"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
