/// The changes a ``PathSource`` reports.
public struct PathEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An entry appeared: created, moved or renamed into place.
    public static let created = PathEvents(rawValue: 1 << 0)
    /// An entry went away: deleted, or moved or renamed elsewhere.
    public static let deleted = PathEvents(rawValue: 1 << 1)
    /// An entry's contents were written.
    public static let modified = PathEvents(rawValue: 1 << 2)
    /// An entry's metadata changed (permissions, owner, times, links).
    public static let attributes = PathEvents(rawValue: 1 << 3)
    /// Every change.
    public static let all: PathEvents = [.created, .deleted, .modified, .attributes]
}

/// One change a ``PathSource`` saw.
public struct PathEvent: Sendable, Hashable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Hashable {
        /// The entry appeared (created, or renamed into place).
        case created
        /// The entry went away (deleted, or renamed elsewhere).
        case deleted
        /// The entry's contents were written.
        case modified
        /// The entry's metadata changed.
        case attributes
        /// The kernel's event queue overflowed and dropped events: whatever
        /// is watched may have changed; read it again.
        case overflow
    }

    /// What happened.
    public var kind: Kind
    /// The entry it happened to: the watched file's name, or for a watched
    /// directory the name inside it ("" for the directory itself and for
    /// ``Kind/overflow``).
    public var name: String

    /// Creates an event.
    public init(_ kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// "created settings.json".
    public var description: String { name.isEmpty ? "\(kind)" : "\(kind) \(name)" }

    /// The events of `kind` a source asked for (overflow is always reported).
    func isWanted(by events: PathEvents) -> Bool {
        switch kind {
        case .created: events.contains(.created)
        case .deleted: events.contains(.deleted)
        case .modified: events.contains(.modified)
        case .attributes: events.contains(.attributes)
        case .overflow: true
        }
    }
}
