import ReefTestSupport

/// A multiplier for the number of generated documents and mutants in the differential tests:
/// `REEF_INTEROP_SCALE=20 swift test --filter Differential` runs a 20x soak. Default 1.
let soakScale: Int = max(1, Int(getenvString("REEF_INTEROP_SCALE") ?? "") ?? 1)
