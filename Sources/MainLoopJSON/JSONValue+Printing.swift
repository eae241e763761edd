extension JSONValue {
    /// Compact JSON text (no spaces), object keys in insertion order.
    /// Integral numbers print without a fraction (`27`, not `27.0`).
    public var jsonText: String {
        var bytes: [UInt8] = []
        appendJSON(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact JSON text as UTF-8 bytes (what a socket sends:
    /// no String in between). Strings are copied a run of plain bytes at a
    /// time; only quotes, backslashes and control characters are escaped.
    public func appendJSON(to output: inout [UInt8]) {
        JSONByteWriter.writing(into: &output) { $0.value(self) }
    }

    /// Appends `text` as a JSON string (quoted, escaped), as the printer
    /// writes strings: a line assembled from parts with no value built.
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        JSONByteWriter.writing(into: &output) { $0.string(text) }
    }

    /// Appends the decimal digits of `value`, as the printer writes that
    /// integer, with no printer set up (a count in a line assembled from
    /// text made once).
    package static func appendDigits(of value: UInt64, to output: inout [UInt8]) {
        JSONByteWriter.withDigits(of: value) { output.append(contentsOf: $0) }
    }

    /// Formats a number the way JSON readers expect: integers without a
    /// fraction, everything else in Swift's shortest round-trip form.
    public static func format(_ value: Double) -> String {
        var bytes: [UInt8] = []
        JSONByteWriter.writing(into: &bytes) { $0.number(value) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
