import PeerBenchHarness

// IDTokenKit's scenarios and baselines, plus the peers on the same tokens and keys.
benchmarkMain { fixtures in try allScenarios(fixtures) + jwtKitScenarios(fixtures) }
