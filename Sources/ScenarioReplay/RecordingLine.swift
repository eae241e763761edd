import MainLoop
import MainLoopJSON

/// One line of a recording, assembled in memory of its own: appending is a
/// store and a count, with none of an array's uniqueness and capacity
/// checks (a third of a recorded event's cost when the steps were arrays,
/// scripts/service-instructions.sh events with RECORD=1). Grows as needed;
/// ``reset()`` keeps the memory. Owned by one recorder, on one thread.
struct RecordingLine: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0
    /// JSON text of values with no byte form here (numbers, objects),
    /// written by the printer and copied in.
    private var scratch: [UInt8] = []

    init() {
        capacity = 1024
        storage = .allocate(capacity: capacity)
    }

    deinit { storage.deallocate() }

    mutating func reset() { count = 0 }

    /// The line's bytes.
    func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        body(UnsafeBufferPointer(start: storage, count: count))
    }

    @inline(__always)
    private mutating func reserve(_ more: Int) {
        if count + more > capacity { grow(more) }
    }

    @inline(never)
    private mutating func grow(_ more: Int) {
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: max(capacity * 2, count + more))
        bigger.update(from: storage, count: count)
        storage.deallocate()
        storage = bigger
        capacity = max(capacity * 2, count + more)
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append($0) } }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Seconds with up to nine decimals, exactly (``DecimalSeconds``).
    @inline(__always)
    mutating func appendSeconds(nanoseconds: Int64) {
        reserve(32)
        count += DecimalSeconds.write(nanoseconds: nanoseconds, into: storage + count)
    }

    /// `text` as a JSON string: quoted, `"` `\` and control characters escaped.
    mutating func appendString(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            reserve(utf8.count * 6 + 2)
            storage[count] = UInt8(ascii: "\"")
            count += 1
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                    storage[count] = UInt8(ascii: "\\")
                    storage[count + 1] = byte
                    count += 2
                case 0..<0x20:
                    let hex: StaticString = "0123456789abcdef"
                    let digits = hex.utf8Start
                    for (offset, character) in [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                                digits[Int(byte >> 4)], digits[Int(byte & 0xF)]].enumerated() {
                        storage[count + offset] = character
                    }
                    count += 6
                default:
                    storage[count] = byte
                    count += 1
                }
            }
            storage[count] = UInt8(ascii: "\"")
            count += 1
        }
    }

    /// A JSON value: strings, booleans and null directly, anything else
    /// through the printer.
    mutating func appendJSON(_ value: JSONValue) {
        switch value {
        case .string(let text): appendString(text)
        case .bool(let flag): append(flag ? "true" : "false")
        case .null: append("null")
        default:
            scratch.removeAll(keepingCapacity: true)
            value.appendJSON(to: &scratch)
            append(scratch)
        }
    }
}
