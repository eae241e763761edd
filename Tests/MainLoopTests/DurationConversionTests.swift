import MainLoop
import Testing
import TestSupport

/// `Duration.nanosecondsClamped` (the timer path's conversion) agrees with
/// Int128 division truncating toward zero, and clamps beyond Int64.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct DurationConversionTests {
    /// The reference: the plain Int128 arithmetic it replaces.
    static func reference(_ duration: Duration) -> Int64 {
        let nanoseconds = duration.attoseconds / 1_000_000_000
        if nanoseconds > Int128(Int64.max) { return .max }
        if nanoseconds < Int128(Int64.min) { return .min }
        return Int64(nanoseconds)
    }

    @Test func agreesWithInt128DivisionAcrossTheRange() {
        var durations: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(1), .seconds(-1), .milliseconds(1500),
            .nanoseconds(Int64.max), .nanoseconds(Int64.min), .nanoseconds(Int64.max - 1),
            .seconds(Int64.max), .seconds(Int64.min), .seconds(9_223_372_036), .seconds(9_223_372_037),
            .seconds(-9_223_372_036), .seconds(-9_223_372_037),
            Duration(secondsComponent: 0, attosecondsComponent: 999_999_999),
            Duration(secondsComponent: 0, attosecondsComponent: -999_999_999),
            Duration(secondsComponent: 1, attosecondsComponent: 1_000_000_001),
            Duration(secondsComponent: -1, attosecondsComponent: -1_000_000_001),
        ]
        // Pseudo-random attosecond counts over the whole 128-bit range, and near the edges.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        for shift in stride(from: 0, through: 120, by: 8) {
            for _ in 0..<50 {
                let raw = Int128(truncatingIfNeeded: (UInt128(next()) << 64 | UInt128(next())) >> shift)
                durations.append(Duration(attoseconds: raw))
                durations.append(Duration(attoseconds: 0 &- raw))
            }
        }
        for duration in durations {
            #expect(duration.nanosecondsClamped == Self.reference(duration), "\(duration.attoseconds) attoseconds")
        }
    }
}
