// swift-tools-version: 6.1
// The protoc plugins scripts/generate_protos runs: swift-protobuf's protoc-gen-swift (messages) and
// grpc-swift-protobuf's protoc-gen-grpc-swift-2 (the service). A package of its own, so that the project's build
// never compiles them (about 10 minutes on 2 cores); the code they generate is committed.
import PackageDescription

let package = Package(
    name: "ProtocPlugins",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", exact: "1.39.0"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", exact: "2.4.1"),
    ],
    targets: []
)
