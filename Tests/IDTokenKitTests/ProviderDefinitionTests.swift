import Foundation
@testable import IDTokenKit
import Testing

/// One home for a provider (``ProviderDefinition``): the options parser, `idtoken inspect` and docs/options.md's
/// provider table all come from the definitions.
@Suite struct ProviderDefinitionTests {
    @Test func everyProviderHasOneDefinitionUnderItsOwnName() {
        #expect(ProviderDefinition.all.map(\.provider) == Provider.allCases)
        for definition in ProviderDefinition.all {
            #expect(definition.provider.tokenName == definition.tokenName)
            #expect(TokenInspection.Kind(definition.provider).provider == definition.provider)
            // What a provider needs, it does not also list as taken.
            #expect(Set(definition.needs.map(\.option)).isDisjoint(with: definition.takes), "\(definition.provider)")
        }
    }

    @Test func docsOptionsMdHoldsTheDefinitionsTable() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/options.md").standardizedFileURL
        let text = try String(contentsOf: path, encoding: .utf8)
        let start = "<!-- providers: ProviderDefinition.markdownTable -->\n", end = "<!-- /providers -->"
        let from = try #require(text.range(of: start)), to = try #require(text.range(of: end))
        #expect(String(text[from.upperBound..<to.lowerBound]) == ProviderDefinition.markdownTable,
                "docs/options.md's provider table is not the definitions'; it should read:\n\(ProviderDefinition.markdownTable)")
    }

    @Test func anOptionAProviderDoesNotTakeIsRefusedNamingThoseThatDo() {
        for definition in ProviderDefinition.all {
            for option in ProviderDefinition.Option.allCases
            where !definition.takes.contains(option) && !definition.needs.contains(where: { $0.option == option }) && definition.refusals[option] == nil {
                var options = Profile.Options.example(for: definition)
                switch option {
                case .projectID: options.projectID = "p"
                case .projectNumber: options.projectNumber = "1"
                case .audiences: options.audiences = ["a"]
                case .issuers: options.issuers = ["https://i"]
                case .tenant: options.tenant = "t"
                case .allowedSignInProviders: options.allowedSignInProviders = ["apple.com"]
                case .appIDs: options.appIDs = ["1:2:ios:3"]
                case .hostedDomains: options.hostedDomains = ["example.com"]
                case .anyTenant: options.anyTenant = true
                case .entraV1: options.entraV1 = true
                }
                do {
                    _ = try Profile(options: options)
                    Issue.record("\(definition.provider) took \(option)")
                } catch {
                    let takers = ProviderDefinition.all.filter { $0.takes.contains(option) || $0.needs.contains { $0.option == option } }
                    #expect(error.reason.contains(option.spelling) && takers.allSatisfy { error.reason.contains($0.provider.rawValue) },
                            "\(definition.provider), \(option): \(error.reason)")
                }
            }
        }
    }
}
