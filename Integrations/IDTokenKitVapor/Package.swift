// swift-tools-version: 6.1
import PackageDescription

// A sibling package, so that IDTokenKit itself never depends on Vapor (DESIGN §11).
let package = Package(
    name: "IDTokenKitVapor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "IDTokenKitVapor", targets: ["IDTokenKitVapor"]),
        .executable(name: "vapor-sign-in-example", targets: ["VaporSignInExample"]),
    ],
    dependencies: [
        .package(name: "IDTokenKit", path: "../.."),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        .target(
            name: "IDTokenKitVapor",
            dependencies: [
                .product(name: "IDTokenKit", package: "IDTokenKit"),
                .product(name: "IDTokenKitLifecycle", package: "IDTokenKit"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "VaporSignInExample",
            dependencies: ["IDTokenKitVapor", .product(name: "Vapor", package: "vapor")]
        ),
        .testTarget(
            name: "IDTokenKitVaporTests",
            dependencies: [
                "IDTokenKitVapor",
                "VaporSignInExample",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
