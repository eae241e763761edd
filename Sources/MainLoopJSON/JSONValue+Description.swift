extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text, e.g. `{"orientation":"faceUp"}`.
    public var description: String { jsonText }
}

extension JSONObject: CustomStringConvertible {
    /// The object as compact JSON text, keys in insertion order.
    public var description: String { JSONValue.object(self).jsonText }
}
