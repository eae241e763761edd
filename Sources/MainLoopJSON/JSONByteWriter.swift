/// Writes JSON text into a small buffer on the stack and hands it to the
/// output array in bulk: one array append per 512 bytes, where appending
/// byte by byte paid the array's capacity and uniqueness checks for every
/// brace, quote and digit (an observation line of `mainloop run` took 5,029
/// instructions to print, now 3,595; `--probe-json-line` in Benchmarks).
struct JSONByteWriter {
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0
    private let output: UnsafeMutablePointer<[UInt8]>

    /// Runs `body` with a writer whose text is appended to `output`.
    static func writing(into output: inout [UInt8], _ body: (inout JSONByteWriter) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 512) { buffer in
            withUnsafeMutablePointer(to: &output) { output in
                var writer = JSONByteWriter(buffer: buffer.baseAddress!, capacity: buffer.count, output: output)
                body(&writer)
                writer.flush()
            }
        }
    }

    private init(buffer: UnsafeMutablePointer<UInt8>, capacity: Int, output: UnsafeMutablePointer<[UInt8]>) {
        self.buffer = buffer
        self.capacity = capacity
        self.output = output
    }

    private mutating func flush() {
        guard count > 0 else { return }
        output.pointee.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
        count = 0
    }

    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        if count == capacity { flush() }
        buffer[count] = byte
        count &+= 1
    }

    mutating func bytes(_ source: UnsafeBufferPointer<UInt8>) {
        guard let start = source.baseAddress, source.count > 0 else { return }
        if source.count > capacity &- count {
            flush()
            guard source.count <= capacity else { return output.pointee.append(contentsOf: source) }
        }
        (buffer + count).update(from: start, count: source.count)
        count &+= source.count
    }

    mutating func literal(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Bytes of a String, as they are.
    mutating func raw(_ text: String) {
        Self.withUTF8(of: text) { bytes($0) }
    }

    /// `body` with the UTF-8 of `text`: its own storage for a native string
    /// (no copy), else a contiguous copy.
    private static func withUTF8(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        if text.utf8.withContiguousStorageIfAvailable(body) == nil {
            var copy = text
            copy.withUTF8(body)
        }
    }

    mutating func value(_ value: JSONValue) {
        switch value {
        case .null: literal("null")
        case .bool(let flag): flag ? literal("true") : literal("false")
        case .number(let number):
            if let text = number.literal {
                raw(text)
            } else if number.value.isFinite {
                self.number(number.value)
            } else {
                literal("null")
            }
        case .string(let text): string(text)
        case .array(let values):
            byte(UInt8(ascii: "["))
            var first = true
            for element in values {
                if !first { byte(UInt8(ascii: ",")) }
                first = false
                self.value(element)
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            members(of: object, first: true)
            byte(UInt8(ascii: "}"))
        }
    }

    /// The members of `object`, `"key":value` each, comma-separated, with a
    /// comma before the first unless `first`.
    mutating func members(of object: JSONObject, first: Bool) {
        var first = first
        object.withEntries { entries in
            for index in entries.indices {
                member(entries[index].key, entries[index].value, first: first)
                first = false
            }
        }
    }

    /// One member, `"key":value`, after a comma unless `first`.
    mutating func member(_ key: String, _ value: JSONValue, first: Bool) {
        if !first { byte(UInt8(ascii: ",")) }
        string(key)
        byte(UInt8(ascii: ":"))
        self.value(value)
    }

    /// A JSON string: quotes, backslashes and control characters escaped,
    /// runs of other bytes (UTF-8 of any character) copied as they are.
    mutating func string(_ text: String) {
        byte(UInt8(ascii: "\""))
        Self.withUTF8(of: text) { escaped($0) }
        byte(UInt8(ascii: "\""))
    }

    private mutating func escaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let start = utf8.baseAddress else { return }
        let count = utf8.count
        var runStart = 0
        var index = 0
        // Eight bytes at a time while none needs escaping (most text); eight
        // that may are looked at one by one.
        while count &- index >= 8 {
            let word = UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self)
            if Self.mayNeedEscaping(word) {
                for _ in 0..<8 { escapeByte(start, &index, &runStart) }
            } else {
                index &+= 8
            }
        }
        // The last few: when the text has eight bytes, the eight that end it
        // (some already passed) are tested as one word; a short text (a key,
        // a state name) byte by byte, with the loop above not in the way.
        if index < count, count >= 8,
           !Self.mayNeedEscaping(UnsafeRawPointer(start + (count &- 8)).loadUnaligned(as: UInt64.self)) {
            index = count
        }
        while index < count { escapeByte(start, &index, &runStart) }
        bytes(UnsafeBufferPointer(start: start + runStart, count: count &- runStart))
    }

    /// Looks at the byte at `index` and steps past it: a byte that needs
    /// escaping ends the run of bytes copied as they are (from `runStart`),
    /// is written escaped, and starts the next run after it. Bytes of
    /// multi-byte characters are all >= 0x80: copied as they are.
    @inline(__always)
    private mutating func escapeByte(_ start: UnsafePointer<UInt8>, _ index: inout Int, _ runStart: inout Int) {
        let code = start[index]
        index &+= 1
        guard code < 0x20 || code == UInt8(ascii: "\"") || code == UInt8(ascii: "\\") else { return }
        bytes(UnsafeBufferPointer(start: start + runStart, count: index &- 1 &- runStart))
        switch code {
        case UInt8(ascii: "\""): literal(#"\""#)
        case UInt8(ascii: "\\"): literal(#"\\"#)
        case 0x0A: literal(#"\n"#)
        case 0x0D: literal(#"\r"#)
        case 0x09: literal(#"\t"#)
        default:
            literal(#"\u00"#)
            byte(Self.hexDigit(code >> 4))
            byte(Self.hexDigit(code & 0x0F))
        }
        runStart = index
    }

    /// Whether any of the eight bytes is below 0x20, a quote or a backslash
    /// (never false when one is; the bytes are then looked at one by one).
    @inline(__always)
    private static func mayNeedEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ value: UInt64) -> Bool { (value &- ones) & ~value & highs != 0 }
        let below0x20 = (word &- ones &* 0x20) & ~word & highs != 0
        return below0x20 || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\"")))) || hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
    }

    /// The lowercase hex digit of `nibble` (0...15), without building a table.
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// A finite number as ``JSONValue/format(_:)`` writes it. Integers and
    /// numbers with at most three decimals (every observation's `at`, a
    /// wall-clock instant to the millisecond) are written digit by digit;
    /// the rest take Swift's shortest round-trip text, which costs a String.
    mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            integer(Int64(value))
            return
        }
        // Exactly the Double nearest `thousandths / 1000`: then that decimal
        // with its trailing zeros cut is the shortest text that reads back
        // as `value` (below 2^42 two decimals 0.001 apart are never the same
        // Double, so no shorter decimal is), which is what Swift writes too.
        if abs(value) < 4_398_046_511_104 {
            let thousandths = (value * 1000).rounded()
            if thousandths / 1000 == value {
                decimal(thousandths: Int64(thousandths))
                return
            }
        }
        raw("\(value)")
    }

    /// The decimal digits of `value`.
    private mutating func integer(_ value: Int64) {
        if value < 0 { byte(UInt8(ascii: "-")) }
        unsignedInteger(value.magnitude)
    }

    private mutating func unsignedInteger(_ value: UInt64) {
        Self.withDigits(of: value) { bytes($0) }
    }

    /// `body` with the decimal digits of `value`: at most 20, filled from
    /// the end of a 24-byte scratch on the stack.
    static func withDigits(of value: UInt64, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var remaining = value
        var first = 24
        withUnsafeMutableBytes(of: &digits) { scratch in
            repeat {
                first -= 1
                scratch[first] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            let typed = scratch.bindMemory(to: UInt8.self)
            body(UnsafeBufferPointer(rebasing: typed[first...]))
        }
    }

    /// `thousandths / 1000` as a decimal, its trailing zeros cut (not an integer).
    private mutating func decimal(thousandths: Int64) {
        if thousandths < 0 { byte(UInt8(ascii: "-")) }
        let magnitude = thousandths.magnitude
        unsignedInteger(magnitude / 1000)
        var fraction = magnitude % 1000
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        byte(UInt8(ascii: "."))
        var divisor: UInt64 = digits == 3 ? 100 : digits == 2 ? 10 : 1
        while divisor > 0 {
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / divisor % 10))
            divisor /= 10
        }
    }
}
