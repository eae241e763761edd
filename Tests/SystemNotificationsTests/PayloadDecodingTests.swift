import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications
import Testing
import TestSupport

/// A notification's payload decodes into the user's own types, and
/// notifications and JSON values print as JSON (they printed as
/// `JSONObject(keys: …, values: [… JSONValue.string(…)])`).
@Suite(.ownThread, .timeLimit(.minutes(2))) struct PayloadDecodingTests {
    struct Orientation: Decodable, Equatable { let orientation: String }
    struct Accessory: Decodable, Equatable { let accessory: String }
    struct Battery: Decodable, Equatable { let level: Double }

    private func deliveries(_ events: SystemEvent...) throws -> [SystemNotification] {
        let harness = try CenterHarness()
        var delivered: [SystemNotification] = []
        try harness.center.addObserver { delivered.append($0) }
        try harness.app.perform(.launch)
        for event in events { try harness.center.post(event) }
        try harness.loop.runUntilIdle()
        return delivered
    }

    @Test func payloadsDecodeIntoTheUsersTypes() throws {
        let delivered = try deliveries(.orientation(.faceUp), .accessory(id: "usb-1", connected: true), .batteryLevel(0.5))
        #expect(try delivered[0].decodePayload(as: Orientation.self) == Orientation(orientation: "faceUp"))
        #expect(try delivered[1].decodePayload(as: Accessory.self) == Accessory(accessory: "usb-1"))
        #expect(delivered[1].name == "accessoryDidConnect")
        #expect(try delivered[2].decodePayload(as: Battery.self) == Battery(level: 0.5))
    }

    /// A notification's payload fields, visited without building
    /// the object, are the object's members in order.
    @Test func payloadFieldsAreThePayloadsMembers() throws {
        let delivered = try deliveries(.orientation(.faceUp), .accessory(id: "usb-1", connected: true), .batteryLevel(0.5),
                                       .screenMode(screen: "hdmi-1", mode: "1080p"), .protectedData(available: false),
                                       .userDefault(key: "k", value: ["nested": 1]))
        #expect(delivered.count == 6)
        for notification in delivered {
            var fields: [(String, JSONValue)] = []
            notification.forEachPayloadField { fields.append(($0, $1)) }
            #expect(fields.map(\.0) == notification.payload.map(\.key), "\(notification)")
            #expect(fields.map(\.1) == notification.payload.map(\.value), "\(notification)")
        }
    }

    @Test func aPayloadOfAnotherShapeIsADecodingErrorWithItsPath() throws {
        let delivered = try deliveries(.orientation(.faceUp))
        #expect(throws: DecodingError.self) { try delivered[0].decodePayload(as: Accessory.self) }
        do {
            _ = try delivered[0].decodePayload(as: Battery.self)
            Issue.record("decoded a battery from an orientation")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "level")
        }
    }

    @Test func notificationsAndValuesPrintAsJSON() throws {
        let delivered = try deliveries(.orientation(.faceUp))
        #expect("\(delivered[0])" == #"orientationDidChange {"orientation":"faceUp"}"#)
        #expect("\(delivered[0].payload)" == #"{"orientation":"faceUp"}"#)
        let value: JSONValue = ["a": [1, 2.5, "x", .null, true]]
        #expect("\(value)" == #"{"a":[1,2.5,"x",null,true]}"#)
    }
}

/// The decoder on its own: nesting, optionals, integers and errors.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct JSONValueDecoderTests {
    struct Config: Decodable, Equatable {
        struct Limits: Decodable, Equatable { let subjects: Int; let bytes: UInt16 }
        let name: String
        let limits: Limits
        let tags: [String]
        let note: String?
        let ratio: Float
    }

    @Test func decodesNestedObjectsArraysAndOptionals() throws {
        let value: JSONValue = ["name": "svc", "limits": ["subjects": 10, "bytes": 512.0], "tags": ["a", "b"],
                                "note": .null, "ratio": 0.25]
        let config = try JSONValueDecoder().decode(Config.self, from: value)
        #expect(config == Config(name: "svc", limits: .init(subjects: 10, bytes: 512), tags: ["a", "b"], note: nil, ratio: 0.25))
    }

    @Test func integersMustBeWholeAndInRange() throws {
        #expect(try JSONValueDecoder().decode(Int.self, from: 12.0) == 12)
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int.self, from: 12.5) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(UInt8.self, from: 256) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Int.self, from: 1e40) }
    }

    @Test func mismatchesNameThePath() throws {
        let value: JSONValue = ["name": "svc", "limits": ["subjects": "ten", "bytes": 1], "tags": [], "ratio": 1]
        do {
            _ = try JSONValueDecoder().decode(Config.self, from: value)
            Issue.record("decoded a string as an Int")
        } catch DecodingError.typeMismatch(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["limits", "subjects"])
        }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode([String].self, from: ["a", 1]) }
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(String.self, from: .null) }
    }
}
