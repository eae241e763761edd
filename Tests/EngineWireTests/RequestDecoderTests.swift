import AppLifecycle
import EngineWire
import MainLoopJSON
import Testing
import TestSupport

/// The BEHAVIOUR.md §7 vocabulary is decoded once, for the replay, the socket and
/// `ctl`; each context accepts its forms and words its errors the same way.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct RequestDecoderTests {
    private func decode(_ text: String, _ context: RequestContext) throws -> EngineRequest {
        try RequestDecoder.decode(try JSONValue.parse(text).objectValue!, context: context)
    }

    /// `accepts` (the hot path's check, commonest keys first) says what
    /// `forms` (the list the messages print) says, for every key.
    @Test func acceptsIsExactlyTheForms() {
        let keys = ["lifecycle", "system", "input", "memoryWarning", "app", "query", "fly", "", "System", "queryx", "quer"]
        for context in [RequestContext.scenarioStep, .controlSocket] {
            for key in keys { #expect(context.accepts(key) == context.forms.contains(key), "\(context) \(key)") }
        }
    }

    @Test func eachFormDecodesInTheContextsThatAllowIt() throws {
        #expect(try decode(#"{"lifecycle": "home"}"#, .controlSocket) == .lifecycle(.home))
        #expect(try decode(#"{"input": "tap"}"#, .scenarioStep) == .input("tap"))
        #expect(try decode(#"{"query": "stats"}"#, .controlSocket) == .query(.stats))
        #expect(try decode(#"{"system": {"orientation": "faceUp"}}"#, .scenarioStep) == .system(["orientation": "faceUp"]))
        #expect(try decode(#"{"app": {"timer": "t", "every": 0.5}}"#, .scenarioStep)
                == .app(.timerEvery(label: "t", interval: .milliseconds(500))))
        #expect(try decode(#"{"app": {"submitScheduledTask": "s", "kind": "processing", "after": 2, "requiresExternalPower": true}}"#,
                           .scenarioStep)
                == .app(.submitScheduledTask(.processing("s", earliestBeginAfter: .seconds(2), requiresExternalPower: true))))
        #expect(try decode(#"{"app": {"completeScheduledTask": "s"}}"#, .scenarioStep)
                == .app(.completeScheduledTask(identifier: "s", success: true)))
        #expect(try decode(#"{"memoryWarning": true}"#, .controlSocket) == .memoryWarning)
    }

    /// What the encoder writes (a recording's steps) reads back as the
    /// same request, for every form and app action.
    @Test func everyRequestEncodesToWhatDecodesBackToIt() throws {
        let requests: [EngineRequest] = [
            .lifecycle(.launch), .lifecycle(.purge), .system(["accessory": ["id": "dock", "connected": true]]),
            .input("tap \"1\""), .memoryWarning,
            .app(.beginBackgroundTask(name: "b")), .app(.endBackgroundTask(name: "b")), .app(.post(label: "p")),
            .app(.timerAfter(label: "t", delay: .nanoseconds(1))), .app(.timerEvery(label: "t", interval: .seconds(3))),
            .app(.cancelTimer(label: "t")), .app(.startService(mode: "audio")), .app(.stopService(mode: "audio")),
            .app(.setKeepAliveTimeout(.seconds(600))), .app(.scheduleLocalNotification(label: "n", delay: .milliseconds(1500))),
            .app(.blockMainThread(.milliseconds(20))), .app(.onDidEnterBackgroundBlock(.seconds(6))),
            .app(.submitScheduledTask(.appRefresh("r", earliestBeginAfter: .seconds(1)))),
            .app(.submitScheduledTask(.processing("p", earliestBeginAfter: .zero, requiresExternalPower: true,
                                                  requiresNetworkConnectivity: false))),
            .app(.cancelScheduledTask(identifier: "r")), .app(.completeScheduledTask(identifier: "p", success: false)),
        ]
        for request in requests {
            let (key, body) = RequestEncoder.keyAndBody(request)
            let text = JSONValue.object(JSONObject([(key, body)])).jsonText
            #expect(try decode(text, .scenarioStep) == request, "\(text)")
        }
    }

    @Test(arguments: [
        (#"{"query": "state"}"#, RequestContext.scenarioStep, "'query' is not allowed here"),
        (#"{"app": {"blockMainThread": 1}}"#, .controlSocket, "app 'blockMainThread' is a scenario step"),
        (#"{"app": {"onDidEnterBackground": {"blockMainThread": 1}}}"#, .controlSocket,
         "app 'onDidEnterBackground' is a scenario step"),
        (#"{"fly": 1}"#, .controlSocket, "unknown request 'fly'"),
        (#"{}"#, .controlSocket, "exactly one of lifecycle, system, input, memoryWarning, app, query (got nothing)"),
        (#"{"memoryWarning": 1}"#, .scenarioStep, "'memoryWarning' must be true"),
        (#"{"lifecycle": "fly"}"#, .controlSocket, #"unknown lifecycle command "fly""#),
        (#"{"query": "nope"}"#, .controlSocket, #"unknown query "nope" (known: state, stats, values, metrics)"#),
        (#"{"system": {"a": 1, "b": 2}}"#, .controlSocket, "exactly one event kind"),
        (#"{"input": 3}"#, .scenarioStep, "'input' must be a string"),
        (#"{"app": {"timer": "t", "every": 1e-10}}"#, .scenarioStep, "'every' must be more than 0"),
        (#"{"app": {"timer": "t", "after": -1}}"#, .scenarioStep, "'after' must be a number of seconds from 0 to 1000000000 (got -1)"),
        (#"{"app": {"blockMainThread": "x"}}"#, .scenarioStep, #"(got "x")"#),
        (#"{"app": {"submitScheduledTask": "r"}}"#, .scenarioStep, "needs a 'kind', one of appRefresh, processing"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "nightly"}}"#, .scenarioStep, "needs a 'kind'"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "appRefresh", "requiresExternalPower": true}}"#, .scenarioStep,
         "'requiresExternalPower' is for a processing task, not an app refresh"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "requiresNetworkConnectivity": 1}}"#, .scenarioStep,
         "'requiresNetworkConnectivity' must be true or false"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "after": -2}}"#, .scenarioStep, "'after' must be"),
        (#"{"app": {"submitScheduledTask": "r", "kind": "processing", "every": 2}}"#, .scenarioStep, "unknown key 'every'"),
        (#"{"app": {"completeScheduledTask": "r", "success": "yes"}}"#, .scenarioStep, "'success' must be true or false"),
    ])
    func malformedRequestsSayWhatIsWrong(text: String, context: RequestContext, expected: String) {
        #expect(throws: RequestError.self) { try decode(text, context) }
        do { _ = try decode(text, context) } catch {
            #expect("\(error)".contains(expected), "\(error)")
        }
    }

    @Test func timesAreExactDecimalsToTheNanosecond() throws {
        #expect(try SpecTime.duration(try JSONValue.parse("0.3"), field: "at") == .nanoseconds(300_000_000))
        #expect(try SpecTime.duration(try JSONValue.parse("999999999.123456789"), field: "at")
                == .nanoseconds(999_999_999_123_456_789))
        #expect(try SpecTime.duration(try JSONValue.parse("1e-9"), field: "every", positive: true) == .nanoseconds(1))
        #expect(try SpecTime.duration(try JSONValue.parse("4e-10"), field: "at") == .zero, "rounded to the nearest ns")
        #expect(throws: RequestError.self) { try SpecTime.duration(try JSONValue.parse("1000000000.000000001"), field: "at") }
        #expect(throws: RequestError.self) { try SpecTime.duration(try JSONValue.parse("4e-10"), field: "every", positive: true) }
    }
}
