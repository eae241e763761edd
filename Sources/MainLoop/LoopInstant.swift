import Glibc

/// A point in time on a loop's clock, in nanoseconds.
///
/// On a production loop this is `CLOCK_MONOTONIC`; on a deterministic loop
/// it is the manual clock, which starts at zero. Instants of different loops
/// are not comparable.
public struct LoopInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// An instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The clock's origin (a deterministic loop starts here).
    public static let zero = LoopInstant(nanoseconds: 0)

    /// Now on `CLOCK_MONOTONIC`.
    public static func monotonicNow() -> LoopInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return LoopInstant(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }

    /// Seconds since the origin, for printing and replay output.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant `duration` later (saturating, so "far future" stays valid).
    public static func + (lhs: LoopInstant, rhs: Duration) -> LoopInstant {
        let step = rhs.nanosecondsClamped
        let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(step)
        return LoopInstant(nanoseconds: overflow ? (step < 0 ? .min : .max) : sum)
    }

    /// The duration from `rhs` to `lhs`.
    public static func - (lhs: LoopInstant, rhs: LoopInstant) -> Duration {
        .nanoseconds(lhs.nanoseconds &- rhs.nanoseconds)
    }

    /// Seconds since the origin as exact decimal text, to the nanosecond
    /// (`0.3`, `12`, `999999999.123456789`): how observations print `at`.
    public var decimalSeconds: String { DecimalSeconds.text(nanoseconds: nanoseconds) }

    public var description: String { "\(decimalSeconds)s" }
}

extension Duration {
    /// The duration in whole nanoseconds (truncated toward zero), clamped to
    /// Int64 (durations beyond ~292 years are treated as "forever"). On the
    /// timer hot path: `components` would divide and multiply, and Int128
    /// `/` is a library call (the timer schedule+cancel row of `compare`).
    @inlinable
    public var nanosecondsClamped: Int64 {
        // |attoseconds| / 10^9 as one 128-by-64-bit `div` instruction (Int128
        // `/` calls the generic __divti3); exact, truncating toward zero
        // like `/`. Valid while the high word is below the divisor (under
        // about 584 years), which the clamp below covers anyway.
        let attoseconds = self.attoseconds
        let magnitude = attoseconds.magnitude
        let high = UInt64(truncatingIfNeeded: magnitude >> 64), low = UInt64(truncatingIfNeeded: magnitude)
        guard high < 1_000_000_000 else { return attoseconds < 0 ? .min : .max }
        let nanoseconds = UInt64(1_000_000_000).dividingFullWidth((high: high, low: low)).quotient
        if attoseconds < 0 {
            return nanoseconds > Int64.max.magnitude ? .min : -Int64(nanoseconds)
        }
        return nanoseconds > Int64.max.magnitude ? .max : Int64(nanoseconds)
    }

    /// A duration from a (possibly fractional) number of seconds, rounded to
    /// the nearest nanosecond. Total: beyond about ±292 years it saturates
    /// at the largest duration the loop represents, and NaN is zero. For
    /// exact decimal times use ``init(decimalSeconds:)``.
    public static func seconds(fractional value: Double) -> Duration {
        let nanoseconds = (value * 1e9).rounded()
        if nanoseconds.isNaN { return .zero }
        if nanoseconds >= 9.223372036854775807e18 { return .nanoseconds(Int64.max) }
        if nanoseconds <= -9.223372036854775808e18 { return .nanoseconds(Int64.min) }
        return .nanoseconds(Int64(nanoseconds))
    }

    /// The duration in seconds as a Double.
    public var secondsDouble: Double { Double(nanosecondsClamped) / 1e9 }
}
