import AppLifecycle
import Foundation
import MainLoopJSON
import ScenarioReplay
import Testing
import TestSupport

/// The control socket and the replay hand their requests to one
/// interpreter (`RequestInterpreter`): the same requests, sent to a live
/// service and replayed as a scenario, make the same observation lines,
/// app actions and rejections included.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct OneInterpreterTests {
    static var configuration: LifecycleConfiguration {
        var configuration = LifecycleConfiguration()
        configuration.backgroundTaskLimit = .milliseconds(400)
        configuration.expirationLead = .milliseconds(200)
        return configuration
    }

    /// The requests in order, each with what the live test waits for after
    /// sending it (a line with this key and value), and its step's time in
    /// the scenario.
    static let requests: [(request: JSONValue, waitFor: (String, JSONValue)?, at: Double)] = [
        (["app": ["timer": "tick", "after": 0.05]], ("timer", "tick"), 0),
        (["system": ["orientation": "landscapeLeft"]], nil, 1),
        (["input": "tap-1"], nil, 1),
        (["app": ["beginBackgroundTask": "upload"]], nil, 1),
        (["lifecycle": "home"], ("state", "suspended"), 1),
        (["app": ["cancelTimer": "tick"]], ("rejected", "cancelTimer"), 10),
        (["lifecycle": "launch"], ("rejected", "launch"), 10),
        (["system": ["orientation": "faceUp"]], nil, 10),
        (["system": ["orientation": "faceDown"]], nil, 10),
        (["lifecycle": "foreground"], nil, 10),
        (["app": ["post": "after"]], ("task", "after"), 10),
    ]

    @Test func theLiveServiceAndTheReplayPrintTheSameLines() throws {
        let service = try RunningService(configuration: Self.configuration)
        defer { service.stop() }
        for (request, waitFor, _) in Self.requests {
            _ = try service.send(request)
            if let (key, value) = waitFor {
                #expect(eventually { service.observations.contains { $0[key] == value } }, "no \(key) \(value) after \(request)")
            }
        }
        let live = service.observations.map { Self.withoutTime($0) }

        var steps: [JSONValue] = [["at": 0, "lifecycle": "launch"]]
        for (request, _, at) in Self.requests {
            var step = request.objectValue!
            step["at"] = .number(at)
            steps.append(.object(step))
        }
        let scenario = try Scenario.parse(JSONValue.object([
            "name": "the live requests", "steps": .array(steps),
            "config": ["backgroundTaskLimit": 0.4, "expirationLead": 0.2],
        ]))
        let replayed = try ScenarioReplayer.run(scenario).map { Self.withoutTime($0) }
        #expect(live == replayed, "live:\n\(Self.text(live))\nreplay:\n\(Self.text(replayed))")
        // The lines the app actions and the rejections make are among them.
        for (key, value) in [("timer", "tick"), ("expired", "upload"), ("rejected", "cancelTimer"),
                             ("rejected", "launch"), ("task", "after"), ("input", "tap-1")] as [(String, JSONValue)] {
            #expect(live.contains { $0[key] == value }, "no \(key) \(value) line")
        }
    }

    /// The actions that block the main thread are scenario steps: a client
    /// cannot freeze a running service.
    @Test func theSocketRefusesTheActionsThatBlockTheMainThread() throws {
        let service = try RunningService()
        defer { service.stop() }
        let reply = try service.send(["app": ["blockMainThread": 1000]])
        #expect(reply["ok"] == .bool(false))
        #expect(reply["error"]?.stringValue?.contains("is a scenario step") == true, "\(reply)")
        #expect(try service.send(["query": "state"])["ok"] == .bool(true))
    }

    /// `ctl app JSON` sends an app action; the service prints its line.
    @Test func ctlSendsAppActions() throws {
        let service = try RunningService()
        defer { service.stop() }
        let sent = try BuiltTool.run(["ctl", "--socket", service.socket, "app", #"{"post": "via-ctl"}"#])
        #expect(sent.status == 0, "\(sent)")
        #expect(eventually { service.observations.contains { $0["task"] == "via-ctl" } })
        let alone = try BuiltTool.run(["ctl", "--socket", service.socket, "app"])
        #expect(alone.status == 64 && alone.error.contains("'app' takes one argument"), "\(alone)")
    }

    /// A line without its time: the live service prints the wall clock,
    /// the replay the scenario's clock; everything else is the same.
    static func withoutTime(_ line: JSONObject) -> JSONObject {
        var line = line
        line["at"] = nil
        line["time"] = nil
        return line
    }

    static func text(_ lines: [JSONObject]) -> String {
        lines.map { JSONValue.object($0).jsonText }.joined(separator: "\n")
    }
}
