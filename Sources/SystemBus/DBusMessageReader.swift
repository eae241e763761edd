import CSystemd
import Glibc

/// Reads whole values from an sd-bus message, whatever their signature,
/// by peeking at each type: a reply is read without knowing its shape in
/// advance, and a daemon that sends an unexpected shape produces values the
/// caller ignores, never a crash. Depth is bounded (D-Bus allows 64), and
/// so is what is built: a ``Budget`` counts values and string bytes, and a
/// string's length is measured in sd-bus's buffer before it is copied.
enum DBusMessageReader {
    /// What is left of a message's ``DBusReadLimits``.
    struct Budget {
        let limits: DBusReadLimits
        var values = 0
        var stringBytes = 0

        init(_ limits: DBusReadLimits) { self.limits = limits }

        mutating func takeValue() throws(DBusError) {
            values += 1
            guard values <= limits.maxValues else { throw .tooLarge("more than \(limits.maxValues) values") }
        }

        mutating func takeString(_ length: Int) throws(DBusError) {
            guard length <= limits.maxStringLength else {
                throw .tooLarge("a string of \(length) bytes (at most \(limits.maxStringLength))")
            }
            stringBytes += length
            guard stringBytes <= limits.maxStringBytes else { throw .tooLarge("more than \(limits.maxStringBytes) bytes of text") }
        }
    }

    /// The deepest nesting read (the D-Bus specification's own limit).
    static let maxDepth = 64

    /// Every value left in the message's current container.
    static func readAll(_ message: OpaquePointer, depth: Int = 0, budget: inout Budget) throws(DBusError) -> [DBusValue] {
        var values: [DBusValue] = []
        while let value = try readNext(message, depth: depth, budget: &budget) { values.append(value) }
        return values
    }

    /// The next value, or nil at the end of the current container.
    static func readNext(_ message: OpaquePointer, depth: Int, budget: inout Budget) throws(DBusError) -> DBusValue? {
        guard depth < maxDepth else { throw .malformed("a message nested deeper than \(maxDepth) levels") }
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = CSystemd_sd_bus_message_peek_type(message, &type, &contents)
        guard peeked > 0 else {
            if peeked < 0 { throw .system(operation: "reading a message", errno: -peeked) }
            return nil
        }
        try budget.takeValue()
        let code = UInt8(bitPattern: type)
        switch code {
        case UInt8(ascii: "a"), UInt8(ascii: "r"), UInt8(ascii: "v"), UInt8(ascii: "e"):
            let signature = contents.map { String(cString: $0) } ?? ""
            let entered = CSystemd_sd_bus_message_enter_container(message, type, contents)
            guard entered > 0 else { throw .system(operation: "entering a container", errno: -entered) }
            let inner = try readAll(message, depth: depth + 1, budget: &budget)
            let exited = CSystemd_sd_bus_message_exit_container(message)
            guard exited >= 0 else { throw .system(operation: "leaving a container", errno: -exited) }
            switch code {
            case UInt8(ascii: "a"):
                if signature.hasPrefix("{") {
                    return .dictionary(inner.compactMap { entry in
                        guard case .structure(let pair) = entry, pair.count == 2 else { return nil }
                        return (key: pair[0], value: pair[1])
                    })
                }
                return .array(inner)
            case UInt8(ascii: "v"):
                return .variant(inner.first ?? .structure([]))
            default:
                return .structure(inner)
            }
        default:
            return try readBasic(message, type: type, budget: &budget)
        }
    }

    private static func readBasic(_ message: OpaquePointer, type: CChar, budget: inout Budget) throws(DBusError) -> DBusValue {
        func read<T>(_ initial: T) throws(DBusError) -> T {
            var value = initial
            let result = withUnsafeMutablePointer(to: &value) { CSystemd_sd_bus_message_read_basic(message, type, $0) }
            guard result > 0 else { throw .system(operation: "reading a basic value", errno: result < 0 ? -result : 0) }
            return value
        }
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .uint(UInt64(try read(UInt8(0))))
        case UInt8(ascii: "b"): return .bool(try read(Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int(Int64(try read(Int16(0))))
        case UInt8(ascii: "q"): return .uint(UInt64(try read(UInt16(0))))
        case UInt8(ascii: "i"): return .int(Int64(try read(Int32(0))))
        case UInt8(ascii: "u"): return .uint(UInt64(try read(UInt32(0))))
        case UInt8(ascii: "x"): return .int(try read(Int64(0)))
        case UInt8(ascii: "t"): return .uint(try read(UInt64(0)))
        case UInt8(ascii: "d"): return .double(try read(Double(0)))
        case UInt8(ascii: "h"): return .unixFD(try read(Int32(-1)))
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            let pointer: UnsafePointer<CChar>? = try read(nil)
            // Measured where sd-bus keeps it (at most one byte past the
            // limit is looked at), then copied.
            let length = pointer.map { strnlen($0, budget.limits.maxStringLength + 1) } ?? 0
            try budget.takeString(length)
            let text = pointer.map { String(cString: $0) } ?? ""
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "o"): return .objectPath(text)
            case UInt8(ascii: "g"): return .signature(text)
            default: return .string(text)
            }
        default:
            throw .malformed("an unknown D-Bus type code \(type)")
        }
    }
}
