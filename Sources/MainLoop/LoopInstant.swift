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
    /// `/` (or a 128-by-64-bit `dividingFullWidth`) is a library call
    /// (`__udivti3`, 7 % of the timer schedule+cancel row of `compare`
    /// under `perf`).
    @inlinable
    public var nanosecondsClamped: Int64 {
        // |attoseconds| = high·2^64 + low, and 2^64 = q·10^9 + r, so
        // |attoseconds| / 10^9 = high·q + (high·r + low) / 10^9, where the
        // last division is 64-bit by a constant (a multiply and a shift).
        // high·r + low may carry once past 2^64; that 2^64 is q·10^9 + r
        // again, and what is left is then below high·r + r, far from a
        // second carry. Exact, truncating toward zero like `/`, while high
        // stays below 5·10^8 (under about 292 years): the clamp's range.
        let attoseconds = self.attoseconds
        let magnitude = attoseconds.magnitude
        let high = UInt64(truncatingIfNeeded: magnitude >> 64), low = UInt64(truncatingIfNeeded: magnitude)
        guard high < 500_000_000 else { return attoseconds < 0 ? .min : .max }
        let q: UInt64 = 18_446_744_073, r: UInt64 = 709_551_616
        var (rest, carried) = low.addingReportingOverflow(high &* r)
        var nanoseconds = high &* q
        if carried {
            nanoseconds &+= q
            rest &+= r
        }
        nanoseconds &+= rest / 1_000_000_000
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
