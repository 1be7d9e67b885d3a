import BenchHarness

// Scenarios: Scenarios.swift (baselines and the JOSE layer), VerifierScenarios.swift (IDTokenKit end to end).
benchmarkMain(scenarios: allScenarios)
