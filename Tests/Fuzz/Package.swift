// swift-tools-version: 6.1
// libFuzzer targets for IDTokenKit's parsers. A package of its own so that the instrumented builds never enter
// the library's build or its `swift test`. Build and run them with scripts/fuzz (see README, "Development"):
//
//     swift build -c debug -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing --product FuzzJSON
//
// Every executable starts libFuzzer itself (FuzzDriver), because SwiftPM gives executables a Swift `main`.
import PackageDescription

let package = Package(
    name: "idtokenkit-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "IDTokenKit", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(name: "FuzzDriver", dependencies: ["CFuzzDriver"]),
        .executableTarget(
            name: "FuzzCompactJWS",
            dependencies: ["FuzzDriver", .product(name: "IDTokenKit", package: "IDTokenKit"),
                           .product(name: "JOSE", package: "IDTokenKit")]
        ),
        .executableTarget(
            name: "FuzzAuditLine",
            dependencies: ["FuzzDriver", .product(name: "IDTokenAudit", package: "IDTokenKit"),
                           .product(name: "IDTokenConfiguration", package: "IDTokenKit")]
        ),
        .executableTarget(
            name: "FuzzHTTPHead",
            dependencies: ["FuzzDriver", .product(name: "IDTokenServe", package: "IDTokenKit"),
                           .product(name: "IDTokenKit", package: "IDTokenKit")]
        ),
        .executableTarget(
            name: "FuzzCheckRequest",
            dependencies: ["FuzzDriver", .product(name: "IDTokenServe", package: "IDTokenKit"),
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzDriver", .product(name: "JOSE", package: "IDTokenKit")]),
        .executableTarget(
            name: "FuzzJWKS",
            dependencies: ["FuzzDriver", .product(name: "IDTokenKit", package: "IDTokenKit")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
