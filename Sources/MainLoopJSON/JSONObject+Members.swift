extension JSONObject {
    /// Appends this object's members (`"key":value`, comma-separated) to
    /// the text of an object being written into `output`, which must end
    /// inside that object: right after its `{` or after a member. A comma
    /// comes first unless `output` ends with `{`.
    ///
    /// With ``appendMemberJSON(_:_:to:)`` this assembles one object's text
    /// from parts, with no `JSONObject` built for the whole: a prefix
    /// printed once and reused, then the fields of the moment. It is how
    /// `mainloop run` prints its observation lines.
    ///
    /// ```swift
    /// var line: [UInt8] = [UInt8(ascii: "{")]
    /// let timestamp: JSONObject = ["at": .number(1.5)]
    /// timestamp.appendMembersJSON(to: &line)
    /// JSONObject.appendMemberJSON("state", .string("active"), to: &line)
    /// line.append(UInt8(ascii: "}"))  // {"at":1.5,"state":"active"}
    /// ```
    public func appendMembersJSON(to output: inout [UInt8]) {
        let first = Self.opensObject(output)
        JSONByteWriter.writing(into: &output) { $0.members(of: self, first: first) }
    }

    /// Appends one member, `"key":value`, to the text of an object being
    /// written into `output`, as ``appendMembersJSON(to:)`` does.
    public static func appendMemberJSON(_ key: String, _ value: JSONValue, to output: inout [UInt8]) {
        let first = opensObject(output)
        JSONByteWriter.writing(into: &output) { $0.member(key, value, first: first) }
    }

    /// Appends the members `body` gives, in order, in one pass: what
    /// ``appendMemberJSON(_:_:to:)`` called once for each would append,
    /// with one writer for them all (each call sets one up, about 200
    /// instructions).
    ///
    /// ```swift
    /// var line: [UInt8] = [UInt8(ascii: "{")]
    /// JSONObject.appendMembersJSON(to: &line) { member in
    ///     member("state", .string("active"))
    ///     member("merged", .number(2))
    /// }
    /// line.append(UInt8(ascii: "}"))  // {"state":"active","merged":2}
    /// ```
    public static func appendMembersJSON(to output: inout [UInt8],
                                         _ body: (_ member: (_ key: String, _ value: JSONValue) -> Void) -> Void) {
        var first = opensObject(output)
        JSONByteWriter.writing(into: &output) { writer in
            body { key, value in
                writer.member(key, value, first: first)
                first = false
            }
        }
    }

    /// Whether the next member is the object's first: `output` ends with `{`.
    private static func opensObject(_ output: [UInt8]) -> Bool {
        output.last == UInt8(ascii: "{")
    }
}
