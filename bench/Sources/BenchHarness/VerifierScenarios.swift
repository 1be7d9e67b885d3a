import IDTokenKit

/// End-to-end scenarios through IDTokenKit's verifier (added as the verifier grows).
func verifierScenarios(_ fixtures: Fixtures) throws -> [Scenario] {
    []
}
