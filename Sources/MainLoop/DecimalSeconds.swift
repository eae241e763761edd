/// Decimal seconds, exactly, to the nanosecond.
///
/// BEHAVIOUR.md §7 times are decimal seconds taken to the nearest whole nanosecond,
/// so `0.2 + 0.1` is exactly `0.3`; going through a Double would make that
/// `0.30000000000000004` and lose digits past the 16th. These conversions
/// work on the decimal text and integer nanoseconds only.
public enum DecimalSeconds {
    /// The nanoseconds in a decimal number of seconds (`"0.3"`, `"1e-9"`,
    /// `"-2.5"`), rounded to the nearest nanosecond (halves away from zero);
    /// nil for text that is not a decimal number, or beyond the Int64 range.
    public static func nanoseconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits: [UInt8] = []
        var fractionDigits = 0
        var seenPoint = false
        while let byte = bytes.first, byte == UInt8(ascii: ".") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) {
            bytes = bytes.dropFirst()
            if byte == UInt8(ascii: ".") {
                guard !seenPoint else { return nil }
                seenPoint = true
            } else {
                digits.append(byte - UInt8(ascii: "0"))
                if seenPoint { fractionDigits += 1 }
            }
        }
        guard !digits.isEmpty else { return nil }
        var exponent = 0
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            let exponentNegative = bytes.first == UInt8(ascii: "-")
            if exponentNegative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            guard !bytes.isEmpty else { return nil }
            for byte in bytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                // Any exponent past 10^6 is far outside the range anyway.
                exponent = min(exponent * 10 + Int(byte - UInt8(ascii: "0")), 1_000_000)
            }
            if exponentNegative { exponent = -exponent }
        } else {
            guard bytes.isEmpty else { return nil }
        }
        // value = digits × 10^(exponent - fractionDigits) seconds
        //       = digits × 10^shift nanoseconds
        // Leading zeros dropped in one step (removing them one at a time
        // was quadratic: 800,000 zeros took seconds).
        guard let firstSignificant = digits.firstIndex(where: { $0 != 0 }) else { return 0 }
        digits.removeSubrange(..<firstSignificant)
        let shift = exponent - fractionDigits + 9
        var magnitude: Int64 = 0
        func push(_ digit: UInt8) -> Bool {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit))
            magnitude = sum
            return !overflow1 && !overflow2
        }
        if shift >= 0 {
            guard digits.count + shift <= 19 else { return nil }
            for digit in digits { guard push(digit) else { return nil } }
            for _ in 0..<shift { guard push(0) else { return nil } }
        } else {
            let kept = digits.count + shift
            if kept > 0 {
                for digit in digits[..<kept] { guard push(digit) else { return nil } }
            }
            let firstDropped = kept >= 0 ? digits[kept] : 0
            if firstDropped >= 5 {
                let (rounded, overflow) = magnitude.addingReportingOverflow(1)
                guard !overflow else { return nil }
                magnitude = rounded
            }
        }
        return negative ? -magnitude : magnitude
    }

    /// Exact decimal text of `nanoseconds` as seconds, without trailing
    /// zeros: `300000000` → `"0.3"`, `12000000000` → `"12"`.
    public static func text(nanoseconds: Int64) -> String {
        // Digits written into a buffer and made a String once: an
        // observation's instant is formatted for nearly every line a
        // recorded session prints (scripts/service-instructions.sh events
        // with RECORD=1).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            let count = write(nanoseconds: nanoseconds, into: buffer.baseAddress!)
            return String(decoding: UnsafeBufferPointer(start: buffer.baseAddress!, count: count), as: UTF8.self)
        }
    }

    /// Writes ``text(nanoseconds:)``'s text into `output` (room for 32
    /// bytes) and returns its length.
    public static func write(nanoseconds: Int64, into output: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        if nanoseconds < 0 {
            output[0] = UInt8(ascii: "-")
            count = 1
        }
        let magnitude = nanoseconds.magnitude
        var whole = magnitude / 1_000_000_000
        var fraction = UInt32(truncatingIfNeeded: magnitude % 1_000_000_000)
        // Two digits at a time from a table (an instant is written for
        // every step and observation of a recorded session).
        let pairs = digitPairs.utf8Start
        // The whole seconds, written backwards into the end of the room, then moved.
        var end = 32
        while whole >= 100 {
            let pair = Int(whole % 100) &* 2
            whole /= 100
            end -= 2
            output[end] = pairs[pair]
            output[end + 1] = pairs[pair + 1]
        }
        if whole >= 10 {
            end -= 2
            output[end] = pairs[Int(whole) &* 2]
            output[end + 1] = pairs[Int(whole) &* 2 + 1]
        } else {
            end -= 1
            output[end] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: whole)
        }
        let digits = 32 - end
        (output + count).update(from: output + end, count: digits)
        count += digits
        guard fraction != 0 else { return count }
        // Nine digits: one, then four pairs; then the trailing zeros dropped.
        output[count] = UInt8(ascii: ".")
        output[count + 1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100_000_000)
        fraction %= 100_000_000
        var index = count + 9
        for _ in 0..<4 {
            let pair = Int(fraction % 100) &* 2
            fraction /= 100
            output[index - 1] = pairs[pair]
            output[index] = pairs[pair + 1]
            index -= 2
        }
        var last = count + 9
        while output[last] == UInt8(ascii: "0") { last -= 1 }
        return last + 1
    }

    /// "00" to "99", for ``write(nanoseconds:into:)``.
    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
}

extension Duration {
    /// A duration from decimal seconds, exactly, rounded to the nearest
    /// nanosecond (see ``DecimalSeconds``); nil for text that is not a
    /// decimal number or is beyond the Int64 range of nanoseconds.
    public init?(decimalSeconds text: String) {
        guard let nanoseconds = DecimalSeconds.nanoseconds(text) else { return nil }
        self = .nanoseconds(nanoseconds)
    }
}
