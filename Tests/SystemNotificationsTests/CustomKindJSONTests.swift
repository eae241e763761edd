import MainLoopJSON
import SystemNotifications
import Testing

/// A rule and its custom kind entry are one declaration: every rule whose
/// format fits its shape converts to an entry and back to an equal rule, and
/// every entry read back writes the same entry.
@Suite struct CustomKindJSONTests {
    /// Each standard rule under a name of its own: together they use every
    /// shape, every naming, every value check but `any`, a value that may be
    /// absent, and every payload form but a perSubject `.none`.
    static let renamedStandardRules = CoalescingRule.standard.map {
        CoalescingRule(kind: NotificationKind("my" + $0.kind.name), shape: $0.shape, defaultValue: $0.defaultValue,
                       eventFormat: $0.eventFormat, naming: $0.naming, payload: $0.payloadFormat)
    }

    /// Fields the standard rules leave out.
    static let otherRules = [
        CoalescingRule(kind: "anything", shape: .latestEvent, defaultValue: .null, eventFormat: .value(.any),
                       naming: .fixed("anythingHappened"), payload: .value(key: "what")),
        CoalescingRule(kind: "depth", shape: .lastValue, defaultValue: 0, eventFormat: .value(.number(0 ... .infinity)),
                       naming: .fixed("depthDidChange"), payload: .value(key: "metres")),
        CoalescingRule(kind: "offset", shape: .lastValue, defaultValue: 0, eventFormat: .value(.number(-.infinity ... .infinity)),
                       naming: .fixed("offsetDidChange"), payload: .value(key: "offset")),
        CoalescingRule(kind: "door", shape: .perSubject, defaultValue: false,
                       eventFormat: .subjectAndValue(subjectField: "door", valueField: "open", value: .bool),
                       naming: .byValue([(true, "doorDidOpen"), (false, "doorDidClose")]), payload: .none),
        CoalescingRule(kind: "flags", shape: .keyDiff, defaultValue: .null,
                       eventFormat: .subjectAndValue(subjectField: "flag", valueField: "on", value: .bool),
                       naming: .fixed("flagsDidChange"), payload: .none),
    ]

    @Test(arguments: renamedStandardRules + otherRules)
    func aRuleConvertsToItsEntryAndBack(_ rule: CoalescingRule) throws {
        let entry = try rule.customKindJSON()
        let read = try CoalescingRule(customKind: entry)
        #expect(read == rule, "\(entry.jsonText)")
        #expect(try read.customKindJSON() == entry)
        // Through the text a kinds file holds, too.
        #expect(try CoalescingRule(customKind: try JSONValue.parse(entry.jsonText)) == rule)
    }

    @Test func theEntryWritesEveryField() throws {
        let level = CoalescingRule.standard.first { $0.kind == .batteryLevel }!
        let renamed = CoalescingRule(kind: "charge", shape: level.shape, defaultValue: level.defaultValue,
                                     eventFormat: level.eventFormat, naming: level.naming, payload: level.payloadFormat)
        #expect(try renamed.customKindJSON().jsonText == #"{"name":"charge","shape":"lastValue","default":1,"#
                + #""notification":"batteryLevelDidChange","valueType":"number","minimum":0,"maximum":1,"payloadKey":"level"}"#)
        let defaults = Self.renamedStandardRules.first { $0.kind.name == "myuserDefaults" }!
        #expect(try defaults.customKindJSON().jsonText == #"{"name":"myuserDefaults","shape":"keyDiff","default":null,"#
                + #""notification":"userDefaultsDidChange","valueType":"any","subjectField":"key","valueField":"value","#
                + #""valueMayBeAbsent":true,"payloadKey":"changed"}"#)
    }

    /// The fields an entry may leave out take the documented defaults.
    @Test func leftOutFieldsTakeTheirDefaults() throws {
        let peer = try CoalescingRule(customKind: ["name": "peer", "shape": "perSubject", "notification": "peerDidChange"])
        #expect(peer == CoalescingRule(kind: "peer", shape: .perSubject, defaultValue: .null,
                                       eventFormat: .subjectAndValue(subjectField: "id", valueField: "value", value: .any),
                                       naming: .fixed("peerDidChange"), payload: .subject(key: "subject")))
        let mood = try CoalescingRule(customKind: ["name": "mood", "shape": "lastValue", "notification": "moodDidChange"])
        #expect(mood.payloadFormat == .value(key: "value"))
        let prefs = try CoalescingRule(customKind: ["name": "prefs", "shape": "keyDiff", "notification": "prefsDidChange"])
        #expect(prefs.payloadFormat == .changedMap(key: "changed"))
    }

    /// Rules the entry cannot express are refused with what does not fit.
    @Test(arguments: [
        (CoalescingRule(kind: "a", shape: .lastValue, defaultValue: .null,
                        eventFormat: .subjectAndValue(subjectField: "id", valueField: "v", value: .any),
                        naming: .fixed("aDidChange"), payload: .value(key: "v")), "event format"),
        (CoalescingRule(kind: "b", shape: .perSubject, defaultValue: .null, eventFormat: .value(.any),
                        naming: .fixed("bDidChange"), payload: .subject(key: "s")), "event format"),
        (CoalescingRule(kind: "c", shape: .perSubject, defaultValue: .null,
                        eventFormat: .subjectAndValue(subjectField: "id", valueField: "v", value: .any),
                        naming: .fixed("cDidChange"), payload: .value(key: "v")), "does not fit"),
        (CoalescingRule(kind: "d", shape: .lastValue, defaultValue: .null, eventFormat: .value(.any),
                        naming: .fixed("dDidChange"), payload: .value(key: "at")), "'payloadKey' may not be 'at'"),
        (CoalescingRule(kind: "e", shape: .lastValue, defaultValue: .null, eventFormat: .value(.number(.infinity ... .infinity)),
                        naming: .fixed("eDidChange"), payload: .value(key: "v")), "JSON cannot write"),
        (CoalescingRule(kind: "orientation", shape: .lastValue, defaultValue: .null, eventFormat: .value(.any),
                        naming: .fixed("x"), payload: .value(key: "v")), "standard kind"),
    ])
    func aRuleWithoutAnEntryIsRefused(_ rule: CoalescingRule, _ problem: String) {
        #expect {
            _ = try rule.customKindJSON()
        } throws: { error in
            (error as? CustomKindError)?.description.contains(problem) == true
        }
    }

    /// A malformed entry is an error naming the field; nothing is registered.
    @Test(arguments: [
        (#"[1]"#, "must be an object"),
        (#"{"shape": "lastValue", "notification": "n"}"#, "needs a 'name'"),
        (#"{"name": "k", "shape": "sideways", "notification": "n"}"#, "needs a 'shape'"),
        (#"{"name": "k", "shape": "lastValue"}"#, "needs 'notification'"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "notificationByValue": []}"#, "not both"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "colour": 1}"#, "unknown key 'colour'"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "subjectField": "id"}"#, "'subjectField' does not apply"),
        (#"{"name": "k", "shape": "perSubject", "notification": "n", "payloadKey": "p"}"#, "'payloadKey' does not apply"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "values": ["a"], "valueType": "string"}"#, "not both"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "values": ["a", 1]}"#, "array of strings"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "valueType": "colour"}"#, "'valueType' must be one of"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "valueType": "bool", "minimum": 0}"#, "go with"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "valueType": "number", "minimum": 2, "maximum": 1}"#, "above 'maximum'"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "valueType": "number", "minimum": "0"}"#, "'minimum' must be a number"),
        (#"{"name": "k", "shape": "keyDiff", "notification": "n", "valueMayBeAbsent": "yes"}"#, "true or false"),
        (#"{"name": "k", "shape": "lastValue", "notification": "n", "noPayload": true, "payloadKey": "p"}"#, "exclude each other"),
        (#"{"name": "k", "shape": "perSubject", "notification": "n", "subjectKey": "s", "valueKey": "s"}"#, "both 's'"),
        (#"{"name": "k", "shape": "perSubject", "notification": "n", "subjectKey": 3}"#, "'subjectKey' must be a string"),
        (#"{"name": "k", "shape": "lastValue", "notification": 3}"#, "'notification' must be a string"),
        (#"{"name": "k", "shape": "lastValue", "notificationByValue": [[1]]}"#, "[value, name]"),
    ])
    func aMalformedEntryNamesItsField(_ text: String, _ problem: String) throws {
        let entry = try JSONValue.parse(text)
        #expect {
            _ = try CoalescingRule(customKind: entry)
        } throws: { error in
            (error as? CustomKindError)?.description.contains(problem) == true
        }
    }
}

extension CoalescingRule: CustomTestStringConvertible {
    public var testDescription: String { kind.name }
}
