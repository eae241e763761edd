import MainLoopJSON
import Testing
import TestSupport

/// An object's text assembled from parts: members appended to an open
/// object, with the commas placed for the caller.
@Suite(.ownThread) struct JSONObjectMembersTests {
    @Test func membersAppendedToAnOpenObjectMakeItsText() {
        var line: [UInt8] = [UInt8(ascii: "{")]
        let timestamp: JSONObject = ["at": .number(1.5)]
        timestamp.appendMembersJSON(to: &line)
        JSONObject.appendMemberJSON("state", .string("active"), to: &line)
        JSONObject().appendMembersJSON(to: &line)
        (["k\"ey": ["n": .null]] as JSONObject).appendMembersJSON(to: &line)
        line.append(UInt8(ascii: "}"))
        #expect(String(decoding: line, as: UTF8.self) == #"{"at":1.5,"state":"active","k\"ey":{"n":null}}"#)
    }

    @Test func theFirstMemberHasNoComma() {
        var line: [UInt8] = Array(#"[{"#.utf8)
        JSONObject().appendMembersJSON(to: &line)
        JSONObject.appendMemberJSON("a", 1, to: &line)
        line.append(contentsOf: Array(#"},{"#.utf8))
        (["b": 2, "c": 3] as JSONObject).appendMembersJSON(to: &line)
        line.append(contentsOf: Array(#"}]"#.utf8))
        #expect(String(decoding: line, as: UTF8.self) == #"[{"a":1},{"b":2,"c":3}]"#)
    }

    /// Members given in one pass are the members appended one by one, the
    /// first without a comma after `{` and none at all when none is given;
    /// a long run of them (past the writer's 512-byte buffer) included.
    @Test func membersInOnePassAreTheMembersOneByOne() {
        let members: [(String, JSONValue)] = [("notification", .string("orientationDidChange")), ("o\"k", .string("face\nUp")),
                                              ("merged", .number(2)), ("long", .string(String(repeating: "x", count: 600)))]
        var oneByOne: [UInt8] = [UInt8(ascii: "{")], onePass: [UInt8] = [UInt8(ascii: "{")]
        for (key, value) in members { JSONObject.appendMemberJSON(key, value, to: &oneByOne) }
        JSONObject.appendMembersJSON(to: &onePass) { member in for (key, value) in members { member(key, value) } }
        #expect(onePass == oneByOne)
        JSONObject.appendMembersJSON(to: &onePass) { _ in }
        #expect(onePass == oneByOne, "no member, no comma")
        JSONObject.appendMembersJSON(to: &onePass) { member in member("after", .bool(true)) }
        #expect(String(decoding: onePass, as: UTF8.self).hasSuffix(#"xxx","after":true"#))
    }

    /// Identical means one storage: a copy is, an equal object built
    /// again or reordered is not, and a changed copy is not.
    @Test func identicalIsSharedStorage() {
        let object: JSONObject = ["a": 1, "b": 2]
        var copy = object
        #expect(copy.isIdentical(to: object))
        #expect(!(["a": 1, "b": 2] as JSONObject).isIdentical(to: object))
        #expect(!(["b": 2, "a": 1] as JSONObject).isIdentical(to: object))
        copy["a"] = 5
        #expect(!copy.isIdentical(to: object))
        #expect(JSONObject().isIdentical(to: JSONObject()))
    }
}
