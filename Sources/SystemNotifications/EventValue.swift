/// A value inside the notification engine: a tag and 64 bits, so events,
/// held slots and comparisons involve no reference counting.
///
/// Values compare as JSON values: `true` is not `1` (different tags) and
/// `1` is `1.0` (numbers are stored canonically, `-0` as `0`). Strings that
/// name one of a rule's allowed values are an ``Tag/enumCase`` (an index into
/// the rule's list); any other string, array or object is a
/// ``Tag/symbol`` interned in the engine's `SymbolTable`. Within one kind
/// every value uses one representation, so equal JSON values are equal
/// `EventValue`s.
public struct EventValue: Hashable, Sendable {
    /// What the 64 bits hold.
    public enum Tag: UInt8, Sendable {
        case null, bool, number, enumCase, symbol
    }

    /// The kind of value.
    public let tag: Tag
    /// The payload: 0/1, a Double's bit pattern, an enum index or a symbol id.
    public let bits: UInt64

    @inlinable
    init(tag: Tag, bits: UInt64) {
        self.tag = tag
        self.bits = bits
    }

    /// JSON null.
    public static let null = EventValue(tag: .null, bits: 0)

    /// A Bool.
    @inlinable
    public static func bool(_ value: Bool) -> EventValue { EventValue(tag: .bool, bits: value ? 1 : 0) }

    /// A number; `-0` is stored as `0` so that equal numbers have equal bits.
    /// - Precondition: `value` is finite (JSON has no NaN or infinity; the
    ///   engine checks values before encoding them).
    @inlinable
    public static func number(_ value: Double) -> EventValue {
        EventValue(tag: .number, bits: (value == 0 ? 0 : value).bitPattern)
    }

    /// The `index`-th allowed value of a rule with a value list.
    @inlinable
    public static func enumCase(_ index: Int) -> EventValue { EventValue(tag: .enumCase, bits: UInt64(index)) }

    /// An interned symbol.
    static func symbol(_ id: UInt32) -> EventValue { EventValue(tag: .symbol, bits: UInt64(id)) }

    /// The symbol id, when this is a symbol.
    var symbolID: UInt32? { tag == .symbol ? UInt32(truncatingIfNeeded: bits) : nil }
}
