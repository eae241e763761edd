import MainLoopJSON
import SystemNotifications

/// The text of the fixed parts of a standard kind's notification line,
/// printed once per kind and copied into every line after: for the kinds
/// whose name is fixed and whose payload is their value under one key
/// (orientation, proximity, battery state and the like), a notification's
/// members are `"notification":"orientationDidChange","orientation":`,
/// then the value (for an enumerated kind, one of its cases, each printed
/// once too), then `,"merged":` and the count. Writing a line so costs
/// copies of bytes, where printing the members escaped each key and
/// string again (about 2,000 instructions a line).
///
/// The text is what ``ObservationRecorder``'s member-by-member writing
/// prints, byte for byte: each piece is printed by the same printer.
struct NotificationLineText {
    /// One kind's pieces, for the rule they were printed from. A class:
    /// a line takes its kind's pieces with one retain, where a struct's
    /// four references were retained and released one by one.
    final class Pieces {
        let rule: CoalescingRule
        /// The payload's one key (a line whose timestamp has this key is
        /// written the general way, as is every line of a rule whose key
        /// is `notification` or `merged`).
        let payloadKey: String
        /// `"notification":"<name>","<key>":`
        let head: [UInt8]
        /// Each enumerated case's JSON text, by case index (empty for a
        /// kind that is not enumerated).
        let cases: [[UInt8]]

        init(rule: CoalescingRule, payloadKey: String, head: [UInt8], cases: [[UInt8]]) {
            self.rule = rule
            self.payloadKey = payloadKey
            self.head = head
            self.cases = cases
        }
    }

    /// By slot; nil where not printed yet. A slot whose rule does not fit
    /// keeps a nil (and is looked at again, which costs a few compares).
    private var bySlot: [Pieces?] = []

    /// The pieces of `rule`'s lines at `slot`, printed on first use; nil
    /// for a rule whose lines do not take this form.
    mutating func pieces(slot: Int, rule: CoalescingRule) -> Pieces? {
        if slot < bySlot.count, let pieces = bySlot[slot], pieces.rule === rule { return pieces }
        guard case .fixed(let name) = rule.naming, case .value(let key) = rule.payloadFormat,
              key != ObservationRecorder.nameKey, key != ObservationRecorder.mergedKey else { return nil }
        var head: [UInt8] = []
        JSONValue.string(ObservationRecorder.nameKey).appendJSON(to: &head)
        head.append(UInt8(ascii: ":"))
        JSONValue.string(name).appendJSON(to: &head)
        head.append(UInt8(ascii: ","))
        JSONValue.string(key).appendJSON(to: &head)
        head.append(UInt8(ascii: ":"))
        let cases = (rule.enumeratedValues ?? []).map { value -> [UInt8] in
            var text: [UInt8] = []
            JSONValue.string(value).appendJSON(to: &text)
            return text
        }
        let pieces = Pieces(rule: rule, payloadKey: key, head: head, cases: cases)
        if slot >= bySlot.count { bySlot.append(contentsOf: repeatElement(nil, count: slot + 1 - bySlot.count)) }
        bySlot[slot] = pieces
        return pieces
    }

    /// The JSON text of `value` (a plain value of `pieces`' rule), or nil
    /// for a value printed the general way (a number).
    static func valueText(_ value: EventValue, of pieces: Pieces) -> [UInt8]? {
        switch value.tag {
        case .enumCase:
            let index = Int(value.bits)
            return index < pieces.cases.count ? pieces.cases[index] : nil
        case .bool: return value.bits != 0 ? trueText : falseText
        case .null: return nullText
        case .number, .symbol: return nil
        }
    }

    private static let trueText = Array("true".utf8), falseText = Array("false".utf8), nullText = Array("null".utf8)

    /// Appends `,"merged":` and the count's decimal digits.
    static func appendMerged(_ merged: Int, to line: inout [UInt8]) {
        line.append(contentsOf: mergedText)
        // A count past a Double's integers (never a real one) is printed as
        // the general printer prints it, from its Double.
        guard merged >= 0, merged < 1 << 53 else {
            return JSONValue.number(Double(merged)).appendJSON(to: &line)
        }
        JSONValue.appendDigits(of: UInt64(merged), to: &line)
    }

    private static let mergedText = Array(#","merged":"#.utf8)
}
