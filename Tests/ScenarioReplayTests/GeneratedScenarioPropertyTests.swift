import Foundation
import MainLoopJSON
import ScenarioReplay
import SystemNotifications
import TestSupport
import Testing

/// Random scenarios, replayed by the real engine, checked against the
/// invariants of BEHAVIOUR.md §1 and §4 (not against a second implementation):
///
/// - no app code (callbacks, notifications, input, timers, tasks, expiry,
///   keep-alive, local notifications delivered to the app) runs while the
///   app is suspended or not running;
/// - on each resume, at most one notification per kind (per subject for
///   per-subject kinds), and the set is exactly the net change from the
///   values at suspension, with `merged` counting the changes held, in the
///   order of each notification's first held event;
/// - live changes are delivered at once, one notification each;
/// - `held == folded + cancelled + discarded + pending` for every kind;
/// - the same scenario gives the same output twice.
///
/// The checker tracks the system's current values (a dictionary per kind)
/// from the events it generated, and learns the app's state only from the
/// observation lines. After every step the generator adds a marker input,
/// whose line (`input` or `discarded`) closes that step's lines; before a
/// system event it adds one too, so what came due at that instant closes
/// before the event and the event's lines are its own.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct GeneratedScenarioPropertyTests {
    /// 200 seeds of 70 steps in CI; `MAINLOOP_PROPERTY_SEEDS=N` and
    /// `MAINLOOP_PROPERTY_STEPS=M` run a deeper sweep.
    static let seeds = Int(ProcessInfo.processInfo.environment["MAINLOOP_PROPERTY_SEEDS"] ?? "") ?? 200
    static let steps = Int(ProcessInfo.processInfo.environment["MAINLOOP_PROPERTY_STEPS"] ?? "") ?? 70

    @Test(arguments: 0..<seeds)
    func generatedScenarioKeepsTheInvariants(seed: Int) throws {
        var generator = ScenarioGenerator(seed: UInt64(seed))
        let json = generator.scenario(steps: Self.steps)
        let scenario = try Scenario.parse(json)
        let first = try ScenarioReplayer.replay(scenario)
        let second = try ScenarioReplayer.replay(scenario)
        #expect(first.observations == second.observations, "seed \(seed): two runs differ")
        if let path = ProcessEnvironment.dumpPath, seed == ProcessEnvironment.dumpSeed {
            try? json.write(toFile: path, atomically: true, encoding: .utf8)
        }
        var checker = InvariantChecker(generator: generator)
        checker.check(first.observations)
        for problem in checker.problems.prefix(5) { Issue.record("seed \(seed): \(problem)") }
        for (kind, counters) in first.statistics {
            #expect(counters.held == counters.folded + counters.cancelled + counters.discarded + counters.pending,
                    "seed \(seed): \(kind) \(counters)")
            if first.finalState != .suspended { #expect(counters.pending == 0, "seed \(seed): \(kind) pending") }
        }
    }
}

/// Set `MAINLOOP_DUMP_SCENARIO=path:seed` to write one generated scenario
/// to a file (to replay it with `mainloop replay` when a seed fails).
enum ProcessEnvironment {
    static let setting = ProcessInfo.processInfo.environment["MAINLOOP_DUMP_SCENARIO"]?.split(separator: ":")
    static var dumpPath: String? { setting.map { String($0[0]) } }
    static var dumpSeed: Int? { setting.flatMap { $0.count > 1 ? Int($0[1]) : nil } }
}


/// The kinds a generated scenario uses: standard kinds of every shape and
/// one custom kind per shape.
enum GeneratedKinds {
    static let custom: [JSONValue] = [
        ["name": "mood", "shape": "lastValue", "default": "calm", "values": ["calm", "busy", "away"],
         "notification": "moodDidChange", "payloadKey": "mood"],
        ["name": "tick", "shape": "latestEvent", "notification": "tickDidHappen", "payloadKey": "source"],
        ["name": "prefs", "shape": "keyDiff", "subjectField": "key", "valueField": "value",
         "notification": "prefsDidChange", "payloadKey": "changed"],
        ["name": "peer", "shape": "perSubject", "default": false, "subjectField": "id", "valueField": "online",
         "notificationByValue": [[true, "peerDidAppear"], [false, "peerDidVanish"]], "subjectKey": "peer"],
    ]

    enum Shape { case lastValue, latestEvent, keyDiff, perSubject }

    /// Kind → (shape, default value).
    static let shapes: [String: (Shape, JSONValue)] = [
        "orientation": (.lastValue, "portrait"), "locale": (.lastValue, "en_US"), "batteryState": (.lastValue, "unplugged"),
        "proximity": (.lastValue, false), "significantTimeChange": (.latestEvent, .null), "userDefaults": (.keyDiff, .null),
        "accessory": (.perSubject, false), "mood": (.lastValue, "calm"), "tick": (.latestEvent, .null),
        "prefs": (.keyDiff, .null), "peer": (.perSubject, false),
    ]

    /// Notification name → kind.
    static func kind(ofNotification name: String) -> String? {
        switch name {
        case "orientationDidChange": return "orientation"
        case "currentLocaleDidChange": return "locale"
        case "batteryStateDidChange": return "batteryState"
        case "proximityStateDidChange": return "proximity"
        case "significantTimeChange": return "significantTimeChange"
        case "userDefaultsDidChange": return "userDefaults"
        case "accessoryDidConnect", "accessoryDidDisconnect": return "accessory"
        case "moodDidChange": return "mood"
        case "tickDidHappen": return "tick"
        case "prefsDidChange": return "prefs"
        case "peerDidAppear", "peerDidVanish": return "peer"
        default: return nil
        }
    }

    /// The (subject, value) a notification line reports, in the event's terms.
    static func report(_ line: JSONObject, kind: String) -> (subject: String?, value: JSONValue) {
        let name = line["notification"]?.stringValue ?? ""
        switch kind {
        case "orientation": return (nil, line["orientation"] ?? .null)
        case "locale": return (nil, line["locale"] ?? .null)
        case "batteryState": return (nil, line["batteryState"] ?? .null)
        case "proximity": return (nil, line["proximity"] ?? .null)
        case "significantTimeChange": return (nil, line["reason"] ?? .null)
        case "mood": return (nil, line["mood"] ?? .null)
        case "tick": return (nil, line["source"] ?? .null)
        case "userDefaults", "prefs": return (nil, line["changed"] ?? .null)
        case "accessory": return (line["accessory"]?.stringValue, .bool(name == "accessoryDidConnect"))
        default: return (line["peer"]?.stringValue, .bool(name == "peerDidAppear"))
        }
    }
}

/// Generates scenarios; remembers each step's system event for the checker.
struct ScenarioGenerator {
    private var random: SeededRandom
    /// The system event whose lines each marker closes, by marker number.
    private(set) var events: [Int: (kind: String, subject: String?, value: JSONValue)] = [:]
    private(set) var initial: [String: JSONValue] = [:]
    private(set) var initialSubjects: [String: [String: JSONValue]] = [:]

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    mutating func scenario(steps count: Int) -> String {
        var steps: [JSONValue] = []
        var at = 0.0
        var markers = 0
        let tasks = ["a", "b", "c"]
        initial = ["orientation": .string(random.pick(["portrait", "faceUp"])), "mood": "busy"]
        initialSubjects = ["accessory": ["dock": true], "userDefaults": ["k1": 1], "peer": ["bob": true]]
        func marker() {
            markers += 1
            steps.append(["at": .number(at), "input": .string("marker-\(markers)")])
        }
        func add(_ step: JSONObject) {
            var step = step
            step["at"] = .number(at)
            if pendingEvent != nil { marker() }
            steps.append(.object(step))
            marker()
            events[markers] = pendingEvent
            pendingEvent = nil
        }
        // Episodes: home, a burst of events (held when the app suspends),
        // then a resume or a kill, with random noise between, so that most
        // scenarios suspend and resume many times.
        func advance() {
            if !random.chance(35) { at += random.chance(5) ? Double(random.pick([120, 300, 600])) : Double(random.below(8)) / 2 }
        }
        func noise() {
            let roll = random.below(100)
            if roll < 45 {
                add(["system": .object(JSONObject([systemEvent()]))])
            } else if roll < 55 {
                add(["input": .string("tap")])
            } else if roll < 65 {
                let commands = ["launch", "launchInBackground", "interrupt", "resumeFromInterrupt", "home", "foreground",
                                "wake", "terminate", "purge"]
                add(["lifecycle": .string(random.pick(commands))])
            } else {
                let name = random.pick(tasks)
                let actions: [JSONValue] = [
                    ["beginBackgroundTask": .string(name)], ["endBackgroundTask": .string(name)],
                    ["timer": .string(name), "after": .number(Double(random.below(6)))],
                    ["timer": .string(name), "every": .number(Double(1 + random.below(4)))],
                    ["cancelTimer": .string(name)], ["post": .string(name)],
                    ["startService": "audio"], ["stopService": "audio"], ["setKeepAliveTimeout": 600],
                    ["blockMainThread": .number(Double(random.below(4)))],
                    ["onDidEnterBackground": ["blockMainThread": .number(Double(random.below(7)))]],
                    ["scheduleLocalNotification": .string(name), "after": .number(Double(random.below(10)))],
                ]
                add(["app": random.pick(actions)])
            }
        }
        add(["lifecycle": "launch"])
        while steps.count < count * 2 {
            for _ in 0..<random.below(4) { advance(); noise() }
            if random.chance(60) {
                // Usually let nothing keep the app in the background.
                for name in tasks where random.chance(80) { add(["app": ["endBackgroundTask": .string(name)]]) }
                if random.chance(80) { add(["app": ["stopService": "audio"]]) }
            }
            advance()
            add(["lifecycle": "home"])
            for _ in 0..<(2 + random.below(8)) {
                advance()
                add(["system": .object(JSONObject([systemEvent()]))])
            }
            advance()
            let ending = random.below(100)
            let command = ending < 60 ? "foreground" : ending < 85 ? "wake" : ending < 93 ? "terminate" : "purge"
            add(["lifecycle": .string(command)])
            if command == "terminate" || command == "purge" { add(["lifecycle": .string(random.pick(["launch", "launchInBackground"]))]) }
        }
        let config: JSONObject = [
            "backgroundTaskLimit": .number(Double(20 + random.below(40))), "expirationLead": .number(Double(2 + random.below(4))),
            "didEnterBackgroundLimit": 5, "backgroundModes": ["audio", "voip"],
            "expirationHandlerEndsTask": .bool(random.chance(70)), "customKinds": .array(GeneratedKinds.custom),
        ]
        var initialJSON = JSONObject()
        for (key, value) in initial { initialJSON[key] = value }
        initialJSON["accessories"] = ["dock"]
        initialJSON["defaults"] = ["k1": 1]
        initialJSON["peer"] = ["bob": true]
        let root: JSONObject = ["name": "generated", "config": .object(config), "initial": .object(initialJSON),
                                "steps": .array(steps)]
        return JSONValue.object(root).jsonText
    }

    private var pendingEvent: (kind: String, subject: String?, value: JSONValue)?

    private mutating func systemEvent() -> (String, JSONValue) {
        let kind = random.pick(["orientation", "orientation", "locale", "batteryState", "proximity", "significantTimeChange",
                                "userDefaults", "userDefaults", "accessory", "accessory", "mood", "tick", "prefs", "peer"])
        switch kind {
        case "orientation": return value(kind, .string(random.pick(["portrait", "faceUp", "landscapeLeft"])))
        case "locale": return value(kind, .string(random.pick(["en_US", "fr_FR"])))
        case "batteryState": return value(kind, .string(random.pick(["unplugged", "charging"])))
        case "proximity": return value(kind, .bool(random.chance(50)))
        case "significantTimeChange": return value(kind, .string(random.pick(["midnight", "clockSet"])))
        case "mood": return value(kind, .string(random.pick(["calm", "busy", "away"])))
        case "tick": return value(kind, .string(random.pick(["x", "y"])))
        case "userDefaults", "prefs":
            // Few keys and values, so keys often return to their value at
            // suspension (a net-zero change) and `1` meets `1.0`.
            let key = random.pick(["k1", "k2"])
            let v: JSONValue = random.pick([.null, 1, 1.0, true, ["a": 1]])
            pendingEvent = (kind, key, v)
            return (kind, .object(JSONObject([("key", .string(key)), ("value", v)])))
        case "accessory":
            let id = random.pick(["dock", "pen"]), connected = random.chance(50)
            pendingEvent = (kind, id, .bool(connected))
            return (kind, ["id": .string(id), "connected": .bool(connected)])
        default:
            let id = random.pick(["bob", "eve"]), online = random.chance(50)
            pendingEvent = (kind, id, .bool(online))
            return (kind, ["id": .string(id), "online": .bool(online)])
        }
    }

    private mutating func value(_ kind: String, _ value: JSONValue) -> (String, JSONValue) {
        pendingEvent = (kind, nil, value)
        return (kind, value)
    }
}

/// Checks the observation lines of a generated scenario.
struct InvariantChecker {
    let generator: ScenarioGenerator
    private(set) var problems: [String] = []
    /// The system's current values: value kinds by kind, keyed kinds by kind then subject.
    private var values: [String: JSONValue] = [:]
    private var subjects: [String: [String: JSONValue]] = [:]
    private var state = "notRunning"
    /// Snapshot at suspension, and what was held since.
    private var atSuspension: (values: [String: JSONValue], subjects: [String: [String: JSONValue]])?
    private var heldChanges: [String: Int] = [:]
    private var heldSubjectChanges: [String: [String: Int]] = [:]
    /// Kinds (and kind/subject for per-subject kinds) in first-held order.
    private var firstHeld: [String] = []
    /// Set between a resume's `background` line and its end.
    private var resuming = false
    private var flushed: [JSONObject] = []

    init(generator: ScenarioGenerator) {
        self.generator = generator
        for (kind, (_, defaultValue)) in GeneratedKinds.shapes { values[kind] = defaultValue }
        for (kind, value) in generator.initial { values[kind] = value }
        subjects = generator.initialSubjects
    }

    mutating func check(_ lines: [JSONObject]) {
        var chunk: [JSONObject] = []
        for line in lines {
            let marker = line["input"]?.stringValue ?? line["discarded"]?.objectValue?["input"]?.stringValue
            guard let marker, marker.hasPrefix("marker-"), let number = Int(marker.dropFirst(7)) else {
                chunk.append(line)
                continue
            }
            if let event = generator.events[number] {
                checkEvent(event, number, chunk)
            } else {
                for line in chunk { observe(line) }
            }
            // A resume never spans steps (it is one transition).
            if resuming { endResume() }
            chunk.removeAll()
        }
    }

    private mutating func fail(_ problem: String) { problems.append(problem) }

    /// The lines of one system event: one live notification for a live
    /// change, nothing otherwise.
    private mutating func checkEvent(_ event: (kind: String, subject: String?, value: JSONValue), _ marker: Int,
                                     _ lines: [JSONObject]) {
        let changed = apply(event)
        let live = state == "inactive" || state == "active" || (state == "background" && !holding)
        guard changed && live else {
            if !lines.isEmpty { fail("marker \(marker): \(event.kind) event that is no live change produced \(lines)") }
            for line in lines { observe(line) }
            return
        }
        guard lines.count == 1, let line = lines.first, let name = line["notification"]?.stringValue,
              GeneratedKinds.kind(ofNotification: name) == event.kind, line["merged"] == 1 else {
            fail("marker \(marker): a live change of \(event.kind) gave \(lines)")
            return
        }
        let (subject, value) = GeneratedKinds.report(line, kind: event.kind)
        // A keyDiff kind names its key inside `changed`, not as a subject.
        let keyDiff = GeneratedKinds.shapes[event.kind]?.0 == .keyDiff
        let expected: JSONValue = keyDiff ? .object(JSONObject([(event.subject!, event.value)])) : event.value
        if subject != (keyDiff ? nil : event.subject) || value != expected {
            fail("marker \(marker): live \(JSONValue.object(line).jsonText) for \(event)")
        }
        observe(line)
    }

    private var holding: Bool { atSuspension != nil && !resuming }

    /// Applies a generated event to the current values; true when it changes one.
    private mutating func apply(_ event: (kind: String, subject: String?, value: JSONValue)) -> Bool {
        let (shape, defaultValue) = GeneratedKinds.shapes[event.kind]!
        var changed: Bool
        if let subject = event.subject {
            let previous = subjects[event.kind]?[subject] ?? defaultValue
            changed = previous != event.value
            // Not `= cond ? nil : value`: JSONValue is ExpressibleByNilLiteral, so
            // that would store `.null` (the defect in the old engine).
            if event.value == defaultValue {
                subjects[event.kind, default: [:]].removeValue(forKey: subject)
            } else {
                subjects[event.kind, default: [:]][subject] = event.value
            }
            if changed, holding {
                heldSubjectChanges[event.kind, default: [:]][subject, default: 0] += 1
                let key = shape == .perSubject ? "\(event.kind)/\(subject)" : event.kind
                if !firstHeld.contains(key) { firstHeld.append(key) }
            }
        } else {
            changed = shape == .latestEvent || values[event.kind] != event.value
            values[event.kind] = event.value
            if changed, holding, !firstHeld.contains(event.kind) { firstHeld.append(event.kind) }
        }
        if changed, holding { heldChanges[event.kind, default: 0] += 1 }
        return changed
    }

    private mutating func observe(_ line: JSONObject) {
        let appCode = ["callback", "notification", "input", "task", "timer", "expired", "keepAlive"]
        if let key = appCode.first(where: { line[$0] != nil }) ?? (line["delivery"] == "app" ? "localNotification" : nil),
           state == "suspended" || state == "notRunning" {
            fail("app code while \(state): \(line) (\(key))")
        }
        if resuming, line["notification"] != nil {
            flushed.append(line)
            return
        }
        if resuming, line["state"] != nil || line["timer"] != nil || line["task"] != nil || line["keepAlive"] != nil
            || line["input"] != nil || line["expired"] != nil || line["localNotification"] != nil {
            if line["state"] != "inactive" && line["callback"] == nil { endResume() }
        }
        guard let newState = line["state"]?.stringValue else { return }
        let previous = state
        state = newState
        switch newState {
        case "suspended":
            if !resuming { atSuspension = (values, subjects) }
        case "notRunning":
            atSuspension = nil
            heldChanges = [:]
            heldSubjectChanges = [:]
            firstHeld = []
        case "background" where previous == "suspended":
            resuming = true
            flushed = []
        default:
            break
        }
    }

    /// Compares the resume's notifications with the net change since suspension.
    private mutating func endResume() {
        resuming = false
        guard let snapshot = atSuspension else { return }
        atSuspension = nil
        var expected: [String: (value: JSONValue, merged: Int)] = [:]
        for (kind, (shape, defaultValue)) in GeneratedKinds.shapes {
            switch shape {
            case .lastValue:
                if values[kind] != snapshot.values[kind], let count = heldChanges[kind] { expected[kind] = (values[kind]!, count) }
            case .latestEvent:
                if let count = heldChanges[kind] { expected[kind] = (values[kind]!, count) }
            case .keyDiff:
                var changed = JSONObject()
                for key in Set(subjects[kind, default: [:]].keys).union(snapshot.subjects[kind, default: [:]].keys)
                where (subjects[kind]?[key] ?? defaultValue) != (snapshot.subjects[kind]?[key] ?? defaultValue) {
                    changed[key] = subjects[kind]?[key] ?? defaultValue
                }
                if !changed.isEmpty { expected[kind] = (.object(changed), heldChanges[kind] ?? 0) }
            case .perSubject:
                for key in Set(subjects[kind, default: [:]].keys).union(snapshot.subjects[kind, default: [:]].keys) {
                    let now = subjects[kind]?[key] ?? defaultValue
                    if now != (snapshot.subjects[kind]?[key] ?? defaultValue) {
                        expected["\(kind)/\(key)"] = (now, heldSubjectChanges[kind]?[key] ?? 0)
                    }
                }
            }
        }
        var seen: Set<String> = []
        var order: [String] = []
        for line in flushed {
            guard let kind = GeneratedKinds.kind(ofNotification: line["notification"]?.stringValue ?? "") else {
                fail("unknown notification \(line)")
                continue
            }
            let (subject, value) = GeneratedKinds.report(line, kind: kind)
            let key = subject.map { "\(kind)/\($0)" } ?? kind
            guard seen.insert(key).inserted else {
                fail("two notifications for \(key) on one resume")
                continue
            }
            order.append(key)
            guard let want = expected[key] else {
                fail("resume delivered \(line), but \(key) has no net change")
                continue
            }
            if want.value != value || line["merged"]?.numberValue != Double(want.merged) {
                fail("resume delivered \(line), expected value \(want.value.jsonText) merged \(want.merged)")
            }
        }
        for key in expected.keys where !seen.contains(key) { fail("resume missed the net change of \(key)") }
        let wantedOrder = firstHeld.filter { seen.contains($0) }
        if order != wantedOrder { fail("resume order \(order), first held order \(wantedOrder)") }
        heldChanges = [:]
        heldSubjectChanges = [:]
        firstHeld = []
    }
}
