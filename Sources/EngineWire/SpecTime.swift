import MainLoop
import MainLoopJSON

/// The times of BEHAVIOUR.md §7 (`at`, `after`, `every`, limits, timeouts): decimal
/// seconds taken to the nearest whole nanosecond, from the number's exact
/// text (so `0.2 + 0.1` is exactly `0.3`). Negative, non-finite or over
/// 10^9 seconds is invalid, and so is an `every` that is not more than 0
/// (after rounding to the nanosecond).
public enum SpecTime {
    /// The largest time allowed, in seconds.
    public static let maximumSeconds: Int64 = 1_000_000_000

    /// Reads the time in `value` (named `field` in messages).
    /// - Parameters:
    ///   - value: a JSON number of seconds (exact decimal), or nil when absent.
    ///   - field: the field's name, for error messages.
    ///   - positive: reject 0 (a repeating interval).
    /// - Throws: ``RequestError`` naming the field and the bounds.
    public static func duration(_ value: JSONValue?, field: String, positive: Bool = false) throws(RequestError) -> Duration {
        let bounds = positive ? "more than 0 and at most \(maximumSeconds)" : "from 0 to \(maximumSeconds)"
        guard let number = value?.exactNumber else {
            throw RequestError("'\(field)' must be a number of seconds \(bounds) (got \(value?.jsonText ?? "nothing"))")
        }
        guard number.value.isFinite, let nanoseconds = DecimalSeconds.nanoseconds(number.decimalText),
              nanoseconds >= 0, nanoseconds <= maximumSeconds * 1_000_000_000
        else {
            throw RequestError("'\(field)' must be a number of seconds \(bounds) (got \(number.decimalText))")
        }
        guard !positive || nanoseconds > 0 else {
            throw RequestError("'\(field)' must be \(bounds), to the nanosecond (got \(number.decimalText))")
        }
        return .nanoseconds(nanoseconds)
    }

    /// The instant `seconds` after the manual clock's origin.
    public static func instant(_ duration: Duration) -> LoopInstant { .zero + duration }

    /// A loop instant as an exact JSON number of seconds (observations' `at`).
    public static func json(_ instant: LoopInstant) -> JSONValue {
        let nanoseconds = instant.nanoseconds
        // Below 2^53 ns (104 days) the quotient of two exact Doubles is the
        // nearest Double to the decimal, as reading the text gives it.
        guard nanoseconds.magnitude < 1 << 53 else {
            return .number(JSONNumber(decimalText: instant.decimalSeconds) ?? JSONNumber(instant.seconds))
        }
        return .number(JSONNumber(value: Double(nanoseconds) / 1e9,
                                  exactText: DecimalSeconds.text(nanoseconds: nanoseconds)))
    }
}
