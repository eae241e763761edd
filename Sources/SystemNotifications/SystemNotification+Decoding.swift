import MainLoopJSON

extension SystemNotification: CustomStringConvertible {
    /// The name and the payload as JSON, e.g.
    /// `orientationDidChange {"orientation":"faceUp"} (merged from 3)`.
    public var description: String {
        merged > 1 ? "\(name) \(payload) (merged from \(merged))" : "\(name) \(payload)"
    }

    /// The payload decoded into your own type, e.g.
    /// `struct Orientation: Decodable { let orientation: String }`.
    /// - Throws: `DecodingError` when the payload does not have the type's shape.
    public func decodePayload<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try JSONValueDecoder().decode(type, from: .object(payload))
    }
}
