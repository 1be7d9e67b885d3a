// swift-tools-version: 6.1
import PackageDescription

// A sibling package, so that IDTokenKit itself never depends on a web framework (DESIGN §11). Vapor and Hummingbird
// live in one package: they share swift-nio, AsyncHTTPClient and IDTokenKit, which one build then compiles once for
// both (scripts/test builds it cold; two packages compiled those twice). An application resolves both frameworks'
// manifests but builds only the product it names.
let package = Package(
    name: "IDTokenKitIntegrations",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "IDTokenKitVapor", targets: ["IDTokenKitVapor"]),
        .library(name: "IDTokenKitHummingbird", targets: ["IDTokenKitHummingbird"]),
        .executable(name: "vapor-sign-in-example", targets: ["VaporSignInExample"]),
        .executable(name: "hummingbird-sign-in-example", targets: ["HummingbirdSignInExample"]),
    ],
    dependencies: [
        .package(name: "IDTokenKit", path: ".."),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // Vapor 4: an AsyncBearerAuthenticator, req.idToken, the shared verifier in Application storage.
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
                .product(name: "IDTokenKitRedis", package: "IDTokenKit"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Hummingbird 2: an AuthenticatorMiddleware on an AuthRequestContext.
        .target(
            name: "IDTokenKitHummingbird",
            dependencies: [
                .product(name: "IDTokenKit", package: "IDTokenKit"),
                .product(name: "IDTokenKitLifecycle", package: "IDTokenKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "HummingbirdSignInExample",
            dependencies: ["IDTokenKitHummingbird", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        .testTarget(
            name: "IDTokenKitHummingbirdTests",
            dependencies: [
                "IDTokenKitHummingbird",
                "HummingbirdSignInExample",
                .product(name: "IDTokenKitRedis", package: "IDTokenKit"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
