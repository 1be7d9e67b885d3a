import Foundation
import Hummingbird

@main
enum HummingbirdSignInExampleMain {
    static func main() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration = ApplicationConfiguration(
            address: .hostname(environment["HOST"] ?? "127.0.0.1", port: environment["PORT"].flatMap(Int.init) ?? 8080))
        // Graceful shutdown on SIGTERM/SIGINT stops the server and then the key-refresh service.
        try await SignInExample.application(idTokens: try SignInExample.idTokens(), configuration: configuration).runService()
    }
}
