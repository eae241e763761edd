import AppLifecycle
import Glibc
import MainLoopJSON
import SystemNotifications

/// Reads request lines of the plain `system` form (``SystemEventLine``)
/// into the events they post, for one notification center, with no JSON
/// tree built for them: what a control socket does with each line before
/// it parses one, since events are most of what a busy client sends.
///
/// Each kind it has resolved is kept by name with its slot, so a kind's
/// name is compared as bytes, not hashed. So is each value of a kind
/// that is one of a small fixed set (an enumerated case, `true`, `false`,
/// `null`), kept as a ``/SystemNotifications/PreparedEvent``: the next line
/// with that value is posted on the engine's hot path. Other values (a
/// number, a free string) are decoded on each line, and nothing is kept
/// for them, so what the reader keeps is bounded by the kinds' cases
/// however many lines it reads.
///
/// ```swift
/// let center = application.notifications
/// var reader = SystemEventLineReader(center: center)
/// let line = Array(#"{"system":{"orientation":"faceUp"}}"#.utf8)
/// switch line.withUnsafeBufferPointer({ reader.event(in: $0) }) {
/// case .prepared(let event): try center.post(event)
/// case .decoded(let event): try center.post(event)
/// case .unread: break  // parse the line as JSON instead
/// }
/// ```
public struct SystemEventLineReader {
    /// What a line holds: an event to post (to the reader's center), or
    /// nothing the reader reads.
    public enum Event {
        /// The event of a value the reader keeps, prepared: post it with
        /// ``/AppLifecycle/SystemNotificationCenter/post(_:)-(PreparedEvent)``.
        case prepared(PreparedEvent)
        /// The event as decoded: post it with
        /// ``/AppLifecycle/SystemNotificationCenter/post(_:)-(SystemEvent)``.
        case decoded(SystemEvent)
        /// Not a line of the plain `system` form, or an event that does
        /// not decode: parse the line as JSON and answer it the usual way,
        /// which words the error (the reader changed nothing, so nothing
        /// is lost). (A case, not an optional: an optional of this enum
        /// was destroyed through generic code, on every line.)
        case unread
    }

    /// A value's text as written and its prepared event. (Structs, not
    /// tuples: an array of tuples is destroyed through generic witnesses.)
    private struct KeptValue {
        let text: [UInt8]
        let event: PreparedEvent
    }

    /// A resolved kind, its name's bytes, its enumerated cases (when it
    /// has them) and the values kept for it.
    private struct ResolvedKind {
        let name: [UInt8]
        let kind: NotificationKind
        let cases: [String]?
        var values: [KeptValue] = []
    }

    /// The center whose kinds and prepared events the reader keeps.
    public let center: SystemNotificationCenter
    /// The kinds resolved so far, at most ``maxResolvedKinds``.
    private var resolved: [ResolvedKind] = []
    /// The most kinds kept: past them a name is looked up by the center
    /// on each line (a service with more kinds than this still works).
    public static let maxResolvedKinds = 32

    /// How many kinds it has resolved (at most ``maxResolvedKinds``).
    public var resolvedKindCount: Int { resolved.count }
    /// How many prepared events it keeps: at most the resolved kinds'
    /// enumerated cases, plus `true`, `false` and `null` for each.
    public var keptEventCount: Int { resolved.reduce(0) { $0 + $1.values.count } }

    /// A reader for `center`'s events, with nothing resolved yet.
    public init(center: SystemNotificationCenter) {
        self.center = center
    }

    /// The event `line` posts, or ``Event/unread`` when the line is not of
    /// the plain `system` form or its event does not decode. Loop thread only.
    public mutating func event(in line: UnsafeBufferPointer<UInt8>) -> Event {
        guard let parts = SystemEventLine(line) else { return .unread }
        let position = Self.position(ofKindNamed: parts.kindName, in: resolved)
        if let position, let kept = Self.keptEvent(parts.valueText, in: resolved[position].values) { return .prepared(kept) }
        let event: SystemEvent
        do {
            let kind = position.map { resolved[$0].kind } ?? NotificationKind(String(decoding: parts.kindName, as: UTF8.self))
            event = try center.decodeEvent(kind: kind, payload: parts.value)
        } catch {
            return .unread  // the JSON path answers with this error
        }
        guard let position = position ?? resolve(event.kind, named: parts.kindName) else { return .decoded(event) }
        return keep(event, text: parts.valueText, isLiteral: parts.isLiteral, at: position)
    }

    /// Where the resolved kind whose name is `name`'s bytes is. (Static,
    /// as ``keptEvent(_:in:)``: a method was called on a copy of the
    /// reader, its center's application retained and released each time,
    /// on the slow path of an object with weak references. Loops over
    /// indices: `firstIndex(where:)` and `first(where:)` copied each
    /// element out, with its arrays retained.)
    private static func position(ofKindNamed name: UnsafeBufferPointer<UInt8>, in resolved: [ResolvedKind]) -> Int? {
        for position in resolved.indices where Self.same(resolved[position].name, name) { return position }
        return nil
    }

    /// The event kept for the value written as `text`.
    private static func keptEvent(_ text: UnsafeBufferPointer<UInt8>, in values: [KeptValue]) -> PreparedEvent? {
        for position in values.indices where Self.same(values[position].text, text) { return values[position].event }
        return nil
    }

    /// Keeps `kind` (just decoded, so it carries its slot), when there is room.
    private mutating func resolve(_ kind: NotificationKind, named name: UnsafeBufferPointer<UInt8>) -> Int? {
        guard resolved.count < Self.maxResolvedKinds else { return nil }
        let cases: [String]?
        do {
            cases = try center.rule(for: kind).enumeratedValues
        } catch {
            return nil  // (it has just decoded an event of the kind)
        }
        resolved.append(ResolvedKind(name: Array(name), kind: kind, cases: cases))
        return resolved.count - 1
    }

    /// The event to post for `event`: prepared and kept when its value is
    /// one of the kind's fixed set (so preparing it pins nothing: such a
    /// value is never interned), else as it is.
    private mutating func keep(_ event: SystemEvent, text: UnsafeBufferPointer<UInt8>, isLiteral: Bool,
                               at position: Int) -> Event {
        let isCase: Bool
        if case .string(let string) = event.value, let cases = resolved[position].cases {
            isCase = cases.contains(string)
        } else {
            isCase = false
        }
        guard event.subject == nil, isLiteral || isCase else { return .decoded(event) }
        let prepared: PreparedEvent
        do {
            prepared = try center.prepare(event)
        } catch {
            return .decoded(event)  // posting it reports why
        }
        resolved[position].values.append(KeptValue(text: Array(text), event: prepared))
        return .prepared(prepared)
    }

    /// Whether `bytes` holds the bytes `other` points to.
    private static func same(_ bytes: [UInt8], _ other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == other.count else { return false }
        guard !bytes.isEmpty else { return true }
        return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, other.baseAddress!, bytes.count) == 0 }
    }
}
