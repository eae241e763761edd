import MainLoopJSON
import SystemNotifications

/// The text of the fixed parts of a standard kind's notification line,
/// printed once per kind and copied into every line after: for the kinds
/// whose name is fixed and whose payload is their value under one key
/// (orientation, proximity, battery state and the like), a notification's
/// members are `"notification":"orientationDidChange","orientation":`,
/// then the value (for an enumerated kind, one of its cases), then
/// `,"merged":` and the count; all but the count are printed once per
/// case, as one piece. Writing a line so costs copies of bytes, where
/// printing the members escaped each key and string again (about 2,000
/// instructions a line).
///
/// The text is what ``ObservationRecorder``'s member-by-member writing
/// prints, byte for byte: each piece is printed by the same printer.
struct NotificationLineText {
    /// One kind's pieces, for the rule they were printed from. A class:
    /// a line takes its kind's pieces with one retain, where a struct's
    /// references were retained and released one by one.
    final class Pieces {
        let rule: CoalescingRule
        /// The payload's one key (a line whose timestamp has this key is
        /// written the general way, as is every line of a rule whose key
        /// is `notification` or `merged`).
        let payloadKey: String
        /// Everything between the timestamp's members and the count, for
        /// each enumerated case by index (empty for a kind that is not
        /// enumerated): `"notification":"<name>","<key>":<case>,"merged":`.
        /// One copy a line, where the head, the value and `,"merged":`
        /// were three (each with its retain and release).
        let caseMiddles: [[UInt8]]
        /// The same for `true`, `false` and `null`.
        let trueMiddle: [UInt8], falseMiddle: [UInt8], nullMiddle: [UInt8]
        /// Whether the timestamp printed at ``ObservationRecorder``'s
        /// generation `checkedGeneration` has `payloadKey` (looked up once
        /// per timestamp, not once per line: a lookup compares strings).
        /// Loop thread only, like the recorder that owns these pieces, and
        /// unchecked like its fields (the `observation-line` probe).
        @exclusivity(unchecked) var checkedGeneration = 0
        @exclusivity(unchecked) var keyInTimestamp = false

        init(rule: CoalescingRule, payloadKey: String, head: [UInt8], cases: [[UInt8]]) {
            self.rule = rule
            self.payloadKey = payloadKey
            func middle(_ value: [UInt8]) -> [UInt8] { head + value + Pieces.mergedText }
            caseMiddles = cases.map(middle)
            trueMiddle = middle(Array("true".utf8))
            falseMiddle = middle(Array("false".utf8))
            nullMiddle = middle(Array("null".utf8))
        }

        /// Appends the line's middle for `value` (a plain value of this
        /// rule); false, appending nothing, for a value printed the
        /// general way (a number).
        func appendMiddle(_ value: EventValue, to line: inout [UInt8]) -> Bool {
            switch value.tag {
            case .enumCase:
                let index = Int(value.bits)
                guard index < caseMiddles.count else { return false }
                line.append(contentsOf: caseMiddles[index])
            case .bool: line.append(contentsOf: value.bits != 0 ? trueMiddle : falseMiddle)
            case .null: line.append(contentsOf: nullMiddle)
            case .number, .symbol: return false
            }
            return true
        }

        static let mergedText = Array(#","merged":"#.utf8)
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

    /// Appends the count's decimal digits (what follows `,"merged":`).
    static func appendCount(_ merged: Int, to line: inout [UInt8]) {
        // The commonest count, one change, is one digit.
        if merged >= 0, merged < 10 { return line.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: merged)) }
        // A count past a Double's integers (never a real one) is printed as
        // the general printer prints it, from its Double.
        guard merged >= 0, merged < 1 << 53 else {
            return JSONValue.number(Double(merged)).appendJSON(to: &line)
        }
        JSONValue.appendDigits(of: UInt64(merged), to: &line)
    }
}
