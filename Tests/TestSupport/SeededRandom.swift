/// SplitMix64: a tiny deterministic generator for the property tests, so a
/// failing seed replays the same sequence.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose state starts at `state` as given.
    public init(state: UInt64) { self.state = state }

    /// A generator for `seed`, mixed so that nearby seeds start far apart.
    public init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 1 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<n.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// One of `values`.
    public mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
    /// True `percent` times in a hundred.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
